"""A counting proxy in front of one OpenAI-compatible model server, so every agent's model
calls and tokens are counted the same way: from the usage in each reply.

A client points its base URL at ``http://127.0.0.1:PORT/t/<tag>/v1``; the proxy strips
``/t/<tag>`` , forwards the request unchanged to the upstream server, returns the reply
unchanged, and appends one JSON line per call to the log:
``{"tag", "path", "status", "t0", "t1", "prompt_tokens", "completion_tokens",
"cached_tokens", "stream"}`` (and what ``note`` adds from the request; none here).
``cached_tokens`` is what the server says it took from its
prompt cache (llama.cpp: ``timings.cache_n`` or ``usage.prompt_tokens_details``).

    proxy = CountingProxy("http://127.0.0.1:8765", log_path)
    base = await proxy.start()            # http://127.0.0.1:PORT
    ... f"{base}/t/agentlab-click-button-0/v1" ...
    await proxy.stop()

Also a command: ``python -m bench.rivals.proxy --upstream URL --port 8766 --log calls.jsonl``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, web

HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"}


def usage_of(reply: dict) -> dict:
    usage = reply.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    timings = reply.get("timings") or {}
    cached = details.get("cached_tokens")
    if cached is None:
        cached = timings.get("cache_n")
    return {
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cached_tokens": cached,
    }


class CountingProxy:
    def __init__(self, upstream: str, log_path: Path, host: str = "127.0.0.1", port: int = 0):
        self.upstream = upstream.rstrip("/")
        if self.upstream.endswith("/v1"):
            self.upstream = self.upstream[:-3]
        self.log_path = Path(log_path)
        self.host, self.port = host, port
        self._runner: web.AppRunner | None = None
        self._client: ClientSession | None = None

    async def start(self) -> str:
        self._client = ClientSession(timeout=ClientTimeout(total=None, sock_read=1800), auto_decompress=True)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True
        )  # a client gone cancels the upstream call
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the port the system chose for port 0
        return f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._client is not None:
            await self._client.close()

    def note(self, tag: str | None, path: str, body: bytes) -> dict:
        """Extra fields for a completion call's log line, from its request (none here; a
        subclass may look at the prompt)."""
        return {}

    def _log(self, row: dict) -> None:
        with self.log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path, tag = request.rel_url.path, None
        if path.startswith("/t/"):
            _, _, tag, rest = path.split("/", 3) if path.count("/") >= 3 else (None, None, path[3:], "")
            path = "/" + rest
        url = self.upstream + path + (("?" + request.rel_url.query_string) if request.rel_url.query_string else "")
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        stream = False
        if body and "json" in request.headers.get("content-type", ""):
            try:
                stream = bool(json.loads(body).get("stream"))
            except (ValueError, AttributeError):
                pass
        note = self.note(tag, path, body) if path.endswith("/completions") else {}
        t0 = time.time()
        assert self._client is not None, "start() first"
        async with self._client.request(request.method, url, data=body, headers=headers) as up:
            out_headers = {k: v for k, v in up.headers.items() if k.lower() not in HOP | {"content-encoding"}}
            if not stream:
                data = await up.read()
                row = {"tag": tag, "path": path, "status": up.status, "t0": t0, "t1": time.time(), "stream": False}
                row.update(note)
                if path.endswith("/completions"):
                    try:
                        row.update(usage_of(json.loads(data)))
                    except (ValueError, AttributeError):
                        row["unparsed"] = True
                    self._log(row)
                return web.Response(body=data, status=up.status, headers=out_headers)
            resp = web.StreamResponse(status=up.status, headers=out_headers)
            await resp.prepare(request)
            last_usage: dict = {}
            buffer = b""
            async for chunk in up.content.iter_any():
                await resp.write(chunk)
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.startswith(b"data:") and (b"usage" in line or b"timings" in line):
                        try:
                            u = usage_of(json.loads(line[5:]))
                            last_usage.update({k: v for k, v in u.items() if v is not None})
                        except ValueError:
                            pass
            await resp.write_eof()
            self._log(
                {
                    "tag": tag,
                    "path": path,
                    "status": up.status,
                    "t0": t0,
                    "t1": time.time(),
                    "stream": True,
                    **{k: last_usage.get(k) for k in ("prompt_tokens", "completion_tokens", "cached_tokens")},
                    **note,
                }
            )
            return resp


async def _serve(args) -> None:
    proxy = CountingProxy(args.upstream, Path(args.log), port=args.port)
    print(f"counting proxy on {await proxy.start()} -> {args.upstream}, log {args.log}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await proxy.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", default="http://127.0.0.1:8765")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--log", default="calls.jsonl")
    try:
        asyncio.run(_serve(parser.parse_args()))
    except KeyboardInterrupt:
        pass
