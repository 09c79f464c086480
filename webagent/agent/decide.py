"""One observation → one action: the web memory of ``webagent.web`` (gists with reuse,
ReadAgent-P look-up, context-length control), or the whole page when it fits the model's
context (``lookup="auto"``), then the live action prompt (``web_live_action``) with the
reply schema of the controls in view (``webagent.web.live_action``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

from webagent.agent.options import AgentOptions
from webagent.agent.task_lines import task_lines
from webagent.browser import Observation
from webagent.errors import UserError
from webagent.html import Snippet
from webagent.llm.client import LLMClient
from webagent.memory import word_count
from webagent.web.agent_view import Control, line_ids, view_snippets
from webagent.web.live_action import Choices, LiveOutcome, predict_live_action
from webagent.web.live_chat import LiveChat
from webagent.web.web_memory import GistReuse, act_on_memory, build_web_memory, fits, look_up


def memory_text(memory, expanded: list[int]) -> str:
    """The live agent's memory as plain lines: a snippet read again in full, the others as
    their gists (control lines keep their start, so the model reads them as on a whole page)."""
    shown = set(expanded)
    return "\n".join(
        f"(part {page.index}, in full)\n{page.text}" if page.index in shown else f"(part {page.index}, summary) {gist}"
        for page, gist in zip(memory.pages, memory.gists)
    )


@dataclass
class Decision:
    outcome: LiveOutcome
    context: str
    allowed: list[str]
    lookup_skipped: str | None = None  # why gists and look-up were skipped
    gists: list[str] = field(default_factory=list)
    gist_fallbacks: list[int] = field(default_factory=list)
    gists_reused: int = 0
    lookup: dict | None = None
    expanded: list[int] = field(default_factory=list)
    dropped_for_context: list[int] = field(default_factory=list)
    context_words: int = 0
    endpoint_failed: bool = False
    failures: int = 0
    times: dict[str, float] = field(default_factory=dict)

    def trace_fields(self) -> dict:
        """What a step's record keeps of the decision (``webagent.trace.writer``)."""
        untraced = (
            "outcome",
            "context",
            "allowed",
            "endpoint_failed",
            "times",
        )  # every other field is kept, by its name
        kept = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in untraced}
        reason = {"reason": self.outcome.reason} if self.outcome.reason else {}  # shown, never executed
        return kept | {"replies": self.outcome.replies} | reason


@dataclass
class DecideContext:
    """What one decision reads: the page, the run so far, the skills the page offers, and how
    the page is read."""

    snippets: list[Snippet]  # the page in the agent view (``agent_view``)
    controls: dict[str, Control]  # every control on the page
    task: str
    history: list[str]
    options: AgentOptions  # how the page is read (``lookup``, ``max_lookup``, ``context_tokens``, ``act_on``)
    url: str = ""
    title: str = ""
    dialog: str = ""  # the kind of dialog the page holds open (then only its answers and DONE are choices)
    can_back: bool = False
    warning: str = ""
    notes: tuple[str, ...] = ()  # the prompt's own words no page shows (``Choices.notes``)
    skills: str = ""  # the lines of the skills the page offers (``skills.offer.block``), read after the page
    skill_params: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)  # ``Choices.skills``
    fill: bool = True  # FILL may be offered (``Choices.fill``)
    reuse: GistReuse | None = None  # gists of snippets met before in the run
    chat: LiveChat | None = None  # the conversation the prompt cache keeps
    repeated: dict[str, str] = field(default_factory=dict)  # actions out of the choices here (``Choices.repeated``)


async def decide(client: LLMClient, ctx: DecideContext) -> Decision:
    """The model's action on ``ctx``'s page (see the module docstring)."""
    snippets, controls, options, reuse, chat = ctx.snippets, ctx.controls, ctx.options, ctx.reuse, ctx.chat
    page = "\n".join(s.text for s in snippets)
    # (after the skills, last before the task: the page's parts the task names, shown again)
    after = [ctx.skills] if ctx.skills and not ctx.dialog else []
    if options.task_lines and not ctx.dialog and (shown := task_lines(page, ctx.task)):
        after.append(shown)

    async def predict(context: str, allowed: list[str], hint: str = "", in_chat: bool = False) -> LiveOutcome:
        choices = Choices(
            {i: controls[i] for i in allowed if i in controls},
            can_back=ctx.can_back,
            dialog=ctx.dialog,
            skills=dict(ctx.skill_params),
            fill=ctx.fill,
            notes=ctx.notes,
            page=page,
            repeated=ctx.repeated,
            reason=options.reason,
        )
        return await predict_live_action(
            client,
            context="\n".join([context, *after]),
            task=ctx.task,
            history=ctx.history,
            choices=choices,
            url=ctx.url,
            title=ctx.title,
            warning=ctx.warning,
            chat=chat if in_chat else None,
        )

    if options.lookup == "auto" and fits(page, options.context_tokens):
        t0 = time.perf_counter()
        allowed = [i for i in line_ids(page) if i in controls]
        outcome = await predict(page, allowed, in_chat=True)
        if outcome.problem_kind != "context_overflow":
            return Decision(
                outcome,
                page,
                allowed,
                context_words=word_count(page),
                lookup_skipped=f"the whole page ({word_count(page)} words) fits the context",
                endpoint_failed=outcome.endpoint_failed,
                failures=outcome.failures,
                times={"action_s": time.perf_counter() - t0},
            )
    if chat is not None:  # the page is read through its gists: the conversation starts again after it
        chat.reset()
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    reused_before = reuse.reused if reuse else 0
    memory = await build_web_memory(client, snippets, reuse, gist_prompt="web_live_gist")
    times["gist_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    found = await look_up(client, memory, task=ctx.task, previous_actions=ctx.history, max_pages=options.max_lookup)
    times["lookup_s"] = time.perf_counter() - t0
    lookup_info = {name: getattr(found, name) for name in ("pages", "calls", "failures", "problem", "replies")}
    t0 = time.perf_counter()
    decision = await act_on_memory(
        client,
        memory,
        looked_up=found.pages,
        task=ctx.task,
        previous_actions=ctx.history,
        valid_ids=set(controls),
        act_on=options.act_on,
        context_tokens=options.context_tokens,
        predict=predict,
        visible=line_ids,
        render=memory_text,
    )
    times["action_s"] = time.perf_counter() - t0
    return Decision(
        decision.outcome,
        decision.context,
        decision.allowed,
        gists=list(memory.gists),
        gist_fallbacks=list(memory.fallback_pages),
        gists_reused=(reuse.reused - reused_before) if reuse else 0,
        lookup=lookup_info,
        expanded=decision.expanded,
        dropped_for_context=decision.dropped_for_context,
        context_words=max(memory.context_words(), memory.context_words(expanded=decision.expanded)),
        endpoint_failed=memory.endpoint_failed or found.endpoint_failed or decision.outcome.endpoint_failed,
        failures=len(memory.fallback_pages) + found.failures + decision.outcome.failures,
        times=times,
    )


async def decide_page(
    client: LLMClient, obs: Observation, task: str, history: list[str], options: AgentOptions, *, can_back: bool
) -> Decision | None:
    """One decision on ``obs`` alone, through ``decide`` as a run's step takes it (no gists
    reused, no FILL, no skills): a replay's repair of one recorded step. ``None`` when the page
    shows nothing to act on."""
    try:
        snippets, view = view_snippets(obs.cleaned_html, depth=options.depth, budget_words=options.budget_words)
    except UserError:
        return None
    if not snippets:
        return None
    return await decide(
        client,
        DecideContext(
            snippets,
            view.controls,
            task,
            history,
            options,
            url=obs.url,
            title=obs.title,
            can_back=can_back,
            fill=False,  # one step repaired: no FILL
        ),
    )
