"""The ``MCPServer`` of ``webagent mcp``: the tools (``tools.Tools``) with their descriptions
and argument schemas, each reply masked of every secret the server holds, a failure as one
line the assistant reads (``is_error``), and the log on stderr (stdout is the protocol's),
masked too.

No ``from __future__ import annotations`` here: the SDK reads the tools' signatures, whose
descriptions are made when the server starts."""

import logging
import sys
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from webagent.errors import UserError, first_line
from webagent.mcp_server.policy import Policy
from webagent.mcp_server.tools import (
    AskReply,
    RunDetail,
    RunReply,
    Runs,
    SkillReply,
    Skills,
    Tools,
    Workflows,
)

log = logging.getLogger("webagent.mcp")
Reply = TypeVar("Reply")

Url = Annotated[str, Field(description="Where it starts: an http(s) URL within the allowed sites.")]
Sites = Annotated[
    list[str] | None,
    Field(
        description="Narrow the server's allowed sites for this call: host (any port) or host:port entries, "
        "each within the server's. Never widens them."
    ),
]
SecretNames = Annotated[
    list[str] | None,
    Field(
        description="Names of secrets the server holds that this call may type; write <secret:NAME> where one "
        "goes. Never a value."
    ),
]


class MaskSecrets(logging.Filter):
    """Every log record, its traceback included, with each held secret's value replaced."""

    def __init__(self, policy: Policy):
        super().__init__()
        self.policy = policy

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            record.exc_info, record.exc_text = None, None
        record.msg, record.args = self.policy.mask(message), ()
        return True


def log_to_stderr(policy: Policy, level: int = logging.INFO) -> None:
    """The process's log: plain lines on stderr, masked (replacing the SDK's own handler)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("webagent mcp: %(levelname)s %(message)s"))
    handler.addFilter(MaskSecrets(policy))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def _masked(policy: Policy, reply: Reply) -> Reply:
    """``reply`` with every held secret's value replaced by its placeholder, in every string."""
    if isinstance(reply, str):
        return policy.mask(reply)  # type: ignore[return-value]
    if isinstance(reply, BaseModel):
        return type(reply).model_validate(_masked(policy, reply.model_dump()))
    if isinstance(reply, dict):
        return {k: _masked(policy, v) for k, v in reply.items()}  # type: ignore[return-value]
    if isinstance(reply, list):
        return [_masked(policy, v) for v in reply]  # type: ignore[return-value]
    return reply


async def _answer(policy: Policy, name: str, work) -> Any:
    """The tool's reply, masked; a failure becomes the one line the assistant reads."""
    try:
        return _masked(policy, await work)
    except UserError as exc:
        log.info("%s refused: %s", name, exc)
        raise ToolError(policy.mask(str(exc))) from None
    except Exception as exc:  # a bug or a failure of the machine: the line here, the traceback in the log
        log.exception("%s failed", name)
        raise ToolError(policy.mask(f"{type(exc).__name__}: {first_line(exc)}")) from None


def build_server(tools: Tools):
    """The server with every tool; the model client closes with it."""
    policy = tools.policy

    @asynccontextmanager
    async def lifespan(_server) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await tools.model.aclose()

    held = ", ".join(sorted(policy.secrets)) or "none"
    server: Any = MCPServer(
        "webagent",
        instructions=(
            "webagent drives a headless browser with its own model to do a task on a web site, replays saved "
            "workflows, shows a page as its model reads it, lists the skills it learned per site, answers "
            f"questions about long documents, and lists its runs. Allowed sites: {', '.join(policy.sites)}. "
            f"Secrets it holds (by name): {held}."
        ),
        lifespan=lifespan,
    )
    log_to_stderr(policy)  # after MCPServer(), which sets up its own handler
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def step_progress(ctx: Context, step: int, total: int, line: str) -> None:
        line = policy.mask(line)
        log.info("%s", line)
        await ctx.report_progress(step, total, line)

    async def say(line: str) -> None:
        # the server's log only: MCP's logging notifications are deprecated (SEP-2577), and the
        # SDK warns on each one; the steps go out as progress notifications
        log.info("%s", policy.mask(line))

    @server.tool(
        description="Do a task in a browser, starting at a URL: the agent observes the page, acts, and repeats "
        "until it is done or the step limit. Sends a progress notification per step. Returns the status "
        "(done, max_steps, stuck, error), the answer, the steps as text and the trace folder. "
        f"Allowed sites: {', '.join(policy.sites)}. Secrets held: {held}."
    )
    async def run_task(
        url: Url,
        task: Annotated[str, Field(description="What to do, in words; <secret:NAME> where a secret is typed.")],
        ctx: Context,
        allowed_sites: Sites = None,
        secrets: SecretNames = None,
        max_steps: Annotated[
            int | None, Field(ge=1, description=f"Most steps (the server's limit: {policy.max_steps}).")
        ] = None,
    ) -> Annotated[CallToolResult, RunReply]:
        return _ended(
            await _answer(
                policy,
                "run_task",
                tools.run_task(
                    url,
                    task,
                    allowed_sites,
                    secrets,
                    max_steps,
                    lambda step, total, line: step_progress(ctx, step, total, line),
                    say,
                ),
            )
        )

    @server.tool(
        description="Replay a saved workflow (list_workflows names them) without the model, with new values "
        "for its parameters; a step whose page changed goes to the model. Returns as run_task does."
    )
    async def replay_workflow(
        name: Annotated[str, Field(description="The saved workflow's name.")],
        ctx: Context,
        params: Annotated[
            dict[str, str] | None,
            Field(description="New values of its parameters, by name; <secret:NAME> for a secret one."),
        ] = None,
        url: Annotated[str | None, Field(description="Start here instead of the recorded start URL.")] = None,
        allowed_sites: Sites = None,
        secrets: SecretNames = None,
    ) -> Annotated[CallToolResult, RunReply]:
        return _ended(
            await _answer(
                policy,
                "replay_workflow",
                tools.replay_workflow(
                    name,
                    params,
                    url,
                    allowed_sites,
                    secrets,
                    lambda step, total, line: step_progress(ctx, step, total, line),
                    say,
                ),
            )
        )

    @server.tool(description="The saved workflows: name, task, steps, parameters, start URL.", annotations=reads)
    async def list_workflows() -> Workflows:
        return await _answer(policy, "list_workflows", _now_call(tools.list_workflows))

    @server.tool(
        description="A page as the agent's model reads it, then each control with its role and accessible "
        "name as Chromium computes them.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def view_page(
        url: Url,
        allowed_sites: Sites = None,
        wait_for_text: Annotated[str | None, Field(description="Capture once this text shows.")] = None,
    ) -> str:
        return await _answer(policy, "view_page", tools.view_page(url, allowed_sites, wait_for_text))

    @server.tool(description="The skills learned per site (host:port), a row each.", annotations=reads)
    async def list_skills(
        site: Annotated[str | None, Field(description="host:port (default: every site).")] = None,
    ) -> Skills:
        return await _answer(policy, "list_skills", _now_call(tools.list_skills, site))

    @server.tool(description="One skill of a site: its parameters, start page and steps.", annotations=reads)
    async def show_skill(
        site: Annotated[str, Field(description="host:port")],
        skill_id: Annotated[str, Field(description="The skill's id (list_skills names them).")],
    ) -> SkillReply:
        return await _answer(policy, "show_skill", _now_call(tools.show_skill, site, skill_id))

    @server.tool(
        description="Answer a question about a long document (.txt, .md, .html) in the server's document "
        "folders, reading it as ReadAgent does: gist memory, then the pages that matter.",
        annotations=reads,
    )
    async def ask_document(
        path: Annotated[str, Field(description="The document's path, under the server's document folders.")],
        question: str,
        method: Annotated[
            str, Field(description="readagent-p (default), readagent-s, or another reading method (full, bm25@k).")
        ] = "readagent-p",
        max_pages: Annotated[int, Field(ge=1, le=50, description="Most pages to look up.")] = 5,
    ) -> AskReply:
        return await _answer(policy, "ask_document", tools.ask_document(path, question, method, max_pages))

    @server.tool(description="The recent runs and replays, newest first.", annotations=reads)
    async def list_runs(limit: Annotated[int, Field(ge=1, le=200, description="How many.")] = 20) -> Runs:
        return await _answer(policy, "list_runs", _now_call(tools.list_runs, limit))

    @server.tool(description="One run: its task, status, answer, steps as text and report.", annotations=reads)
    async def show_run(run: Annotated[str, Field(description="The run's id, as list_runs gives it.")]) -> RunDetail:
        return await _answer(policy, "show_run", _now_call(tools.show_run, run))

    return server


def _ended(reply: RunReply) -> CallToolResult:
    """A run's or a replay's reply, an error reply (``is_error``) when it ended ``error``: a
    failure never reads as a success, and the assistant still gets the steps and the trace."""
    return CallToolResult(
        content=[TextContent(type="text", text=reply.model_dump_json(indent=2))],
        structured_content=reply.model_dump(mode="json"),
        is_error=reply.status == "error",
    )


async def _now_call(fn, *args):
    return fn(*args)
