"""``within(awaitable, seconds)``: ``asyncio.wait_for`` without its Python 3.11 flaw.

In 3.11, ``wait_for`` runs the awaitable in a task of its own, and when the caller is
cancelled just as that task finishes it returns the result and drops the cancellation
(fixed in 3.12): a Ctrl-C arriving then would be lost, and an action's settle wait makes
that window wide. ``asyncio.timeout`` runs the awaitable in the caller's own task, so a
cancellation always arrives. Raises ``TimeoutError`` (``asyncio.TimeoutError`` is the
same class since 3.11) when the time is up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float) -> T:
    async with asyncio.timeout(seconds):
        return await awaitable
