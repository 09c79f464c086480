"""A ``confirm`` or ``prompt`` that an action of the caller raises is held open for the caller
to answer (``Action(op="DIALOG", value="accept"|"dismiss", text=...)``), unless the session
has a fixed policy (``accept_dialogs=True``: answered at once, see ``events``).

* Held: a dialog raised while a CLICK, TYPE or SELECT runs (``HOLDING_OPS``), one at a time.
  The action returns as soon as it is done or a dialog is held; the held action waits
  (its Playwright call does not return while a modal dialog is open) until the dialog is
  answered. ``session.dialog`` says what the page asks; the ``ActionResult`` carries it
  (``dialog``) and its note says how to answer.
* While a dialog is open the page runs no script: nothing evaluates JS in it, captures it
  or takes a screenshot of it (they would wait for the answer).
* Answering finishes the held action (bounded) and may hold the next dialog it raises.
* Not held: ``alert`` (acknowledged), ``beforeunload``, a dialog raised between actions (a
  timer) or while one is open already: today's policy of ``events.answer_dialog``.
* A dialog left open is dismissed before any other action or capture (``close_open``), so
  callers that never answer dialogs behave as before, and nothing is left hanging.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from webagent.browser.models import Dialog

HOLDING_OPS = ("CLICK", "TYPE", "SELECT")
HELD_KINDS = ("confirm", "prompt")
_MAX_CHAINED = 5  # dialogs dismissed in a row by ``close_open`` (each may raise the next)


def init(session) -> None:
    session.dialog = None  # the held dialog as the caller reads it (``Dialog``), or None
    session._dialog = None  # Playwright's Dialog behind it
    session._held = None  # the task of the action waiting for the answer
    session._held_result = None  # its ActionResult (``actions`` reports its method and note with the answer)
    session._holding = False  # an action that may hold a dialog is running
    session._dialog_opened = asyncio.Event()


def hold(session, dialog) -> bool:
    """Keep ``dialog`` open for the caller to answer; False when policy answers it."""
    if (
        dialog.type not in HELD_KINDS
        or session.accept_dialogs
        or not getattr(session, "_holding", False)
        or session._dialog is not None
    ):
        return False
    session._dialog = dialog
    session.dialog = Dialog(kind=dialog.type, message=dialog.message or "", default_value=dialog.default_value or "")
    session._dialog_opened.set()
    return True


def ask_line(dialog: Dialog) -> str:
    """What the page asks, and how to answer it: the note of the action that raised it."""
    message = " ".join(dialog.message.split())
    if dialog.kind == "prompt":
        default = f" (its text now: {dialog.default_value!r})" if dialog.default_value else ""
        how = 'DIALOG accept (with a "text" to answer), or DIALOG dismiss'
        return f'the page asks (prompt): "{message}"{default} -- answer it: {how}'
    return f'the page asks ({dialog.kind}): "{message}" -- answer it: DIALOG accept or DIALOG dismiss'


async def run(session, work: Coroutine[Any, Any, None], timeout_s: float) -> None:
    """Run an action's ``work``, holding a dialog it raises; return when it is done or a
    dialog is held (``session.dialog``). Raises what the work raised, ``TimeoutError``."""

    async def holding() -> None:
        session._holding = True
        try:
            await work
        finally:
            session._holding = False

    await _until_done_or_asked(session, asyncio.ensure_future(holding()), timeout_s)


async def _until_done_or_asked(session, task: asyncio.Future, timeout_s: float) -> None:
    opened = asyncio.ensure_future(session._dialog_opened.wait())
    try:
        await asyncio.wait({task, opened}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # cancelled (Ctrl-C): the action goes too
        task.cancel()
        raise
    finally:
        opened.cancel()
    if session._dialog is not None:
        session._held = task  # finished by the answer (``answer``)
        return
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise TimeoutError
    task.result()


async def answer(session, accept: bool, text: str | None, timeout_s: float, why: str = "") -> Dialog:
    """Answer the held dialog, then let the held action finish (it may hold the next dialog).
    Returns the dialog answered, with its ``answer``. Raises ``LookupError`` without one."""
    dialog, shown = session._dialog, session.dialog
    if dialog is None or shown is None:
        raise LookupError("no dialog is open")
    session._dialog = session.dialog = None
    session._dialog_opened.clear()
    reply = (text if text else dialog.default_value or "") if accept and dialog.type == "prompt" else None
    gone = await respond(dialog, accept, reply)
    answered = ("accept" if accept else "dismiss") + (f" {reply!r}" if reply is not None else "")
    record_answer(session, dialog, accept, gone, why, reply)
    task, session._held = session._held, None
    if task is not None:
        await _until_done_or_asked(session, task, timeout_s)
    return shown.model_copy(update={"answer": "gone before it was answered" if gone else answered})


async def close_open(session, why: str = "it was not answered", wait: bool = True) -> None:
    """Dismiss a dialog left open (and, with ``wait``, those the held action raises next)."""
    if getattr(session, "_dialog", None) is None and getattr(session, "_held", None) is None:
        return
    for _ in range(_MAX_CHAINED if wait else 0):
        if getattr(session, "_dialog", None) is None:
            break
        try:
            await answer(session, False, None, session.settle_timeout_s + 2, why)
        except Exception:  # noqa: BLE001 - the held action failed or timed out: it is over
            pass
    cancel_held(session)
    dialog, session._dialog, session.dialog = getattr(session, "_dialog", None), None, None
    if dialog is not None:  # a page that asks again and again: the last one without waiting
        session._dialog_opened.clear()
        gone = await respond(dialog, False)
        record_answer(session, dialog, False, gone, why)


async def respond(dialog, accept: bool, text: str | None = None) -> bool:
    """Accept Playwright's ``dialog`` (with ``text`` when given) or dismiss it; whether it was gone already."""
    try:
        if not accept:
            await dialog.dismiss()
        elif text is not None:
            await dialog.accept(text)
        else:
            await dialog.accept()
    except Exception:  # noqa: BLE001 - the page may be gone already
        return True
    return False


def cancel_held(session) -> None:
    """For ``close()``: the held action goes with the browser."""
    task, session._held = getattr(session, "_held", None), None
    session._held_result = None
    if task is not None:
        task.cancel()


_ANSWER = {
    ("confirm", True): "accepted (answered OK)",
    ("confirm", False): "dismissed (answered Cancel)",
    ("prompt", False): "dismissed (answered Cancel)",
    ("beforeunload", True): "accepted (the page may be left)",
    ("beforeunload", False): "dismissed (the page stays)",
}


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_answer(session, dialog, accept: bool, gone: bool = False, why: str = "", text: str | None = None) -> None:
    """The event line of an answered dialog: ``dialog confirm 'Sure?' accepted (answered OK)``."""
    kind = dialog.type
    if gone:
        outcome = "gone before it was answered"
    elif kind == "alert":
        outcome = "acknowledged"
    elif kind == "prompt" and accept:
        outcome = f"accepted with {(dialog.default_value if text is None else text)!r}"
    else:
        outcome = _ANSWER.get((kind, accept), "accepted" if accept else "dismissed")
    message = one_line(dialog.message)
    line = f"dialog {kind}" + (f" {message!r}" if message else "") + f" {outcome}"
    session.events.append(line + (f": {why}" if why else ""))
