"""The worker side of ``mind2web eval --ray``: one Mind2Web task (its pending method-steps) in a
Ray worker process, on the endpoint every worker reaches; the rows are ``runner``'s own, as
lines of ``steps.jsonl``, returned to the driver, which appends them."""

from __future__ import annotations

import asyncio

from mind2web.data import Step
from mind2web.methods import Variant
from webagent.cluster import with_usage
from webagent.llm.endpoint import EndpointOptions


def task_rows(steps: list[tuple[Step, list[Variant]]], config, endpoint: EndpointOptions, trace: str | None) -> dict:
    from mind2web.runner import run_step
    from webagent.llm.endpoint import open_client

    lines: list[str] = []

    async def run() -> dict:
        async with open_client(endpoint) as client:
            for step, variants in steps:
                await run_step(client, step, variants, config, lambda row: lines.append(row.to_line()))
            return with_usage({"lines": lines}, client)

    return asyncio.run(run())
