"""The demo shop's order through `webagent mcp`'s run_task, as an assistant would place it: the
MCP SDK's own stdio client starts the server with no model flags (the embedded default model)
and the demo shop as its only allowed site, and prints each progress notification, the reply
and the shop's own word on the order.

    .venv/bin/python tools/mcp_demo_order.py [--max-steps 10] [--cwd DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from webagent.demo_site import DEMO_TASK, DemoShop


async def main(max_steps: int, cwd: Path) -> int:
    shop = DemoShop.start()
    site = shop.base.split("//", 1)[1].split("/", 1)[0]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "WEBAGENT_MODEL", "WEBAGENT_EMBEDDED")}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "webagent.cli", "mcp", "--allow-site", site], env=env, cwd=str(cwd)
    )
    notes: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append(message or "")
        print(f"progress {progress:g}/{total or '?'}: {(message or '')[:160]}", flush=True)

    started = time.perf_counter()
    try:
        with (cwd / "server.log").open("w") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                arguments: dict[str, Any] = {"url": shop.base + "index.html", "task": DEMO_TASK, "max_steps": max_steps}
                result = await session.call_tool("run_task", arguments, progress_callback=on_progress)
        reply = result.structured_content or {}
        shown = {k: reply.get(k) for k in ("status", "answer", "step_count", "model_calls", "trace_dir")}
        print(json.dumps(shown, indent=1))
        print(
            f"shop confirms: {shop.confirms(DEMO_TASK)}; orders: {len(shop.orders)}; progress notifications: "
            f"{len(notes)}; seconds: {time.perf_counter() - started:.0f}"
        )
        return 0 if not result.is_error else 1
    finally:
        shop.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the server's folder (its server.log goes there)")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.max_steps, args.cwd)))
