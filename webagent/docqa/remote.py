"""The worker side of ``qa-eval --ray``: one document's pending questions in a Ray worker
process (its memory built once for them, as a serial run builds it), on the endpoints every
worker reaches; the rows are ``runner``'s own, returned to the driver, which appends them."""

from __future__ import annotations

import asyncio
import contextlib

from webagent.cluster import with_usage
from webagent.llm.endpoint import EndpointOptions


def document(
    doc, items, settings, opts, rate: bool, endpoint: EndpointOptions, memory: EndpointOptions | None, trace: str | None
) -> dict:
    from webagent.docqa.runner import run_document
    from webagent.llm.endpoint import open_client

    rows: list[dict] = []
    failed: list[str] = []

    async def run() -> dict:
        async with open_client(endpoint) as client, contextlib.AsyncExitStack() as stack:
            memory_client = await stack.enter_async_context(open_client(memory)) if memory is not None else None
            document_row = await run_document(
                client, doc, items, settings, opts, rate, memory_client, rows.append, failed.append
            )
            return with_usage({"rows": rows, "failed": failed, "document": document_row}, client, memory_client)

    return asyncio.run(run())
