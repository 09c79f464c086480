"""The live loop: observe → snippets → (gists → look-up) → action → execute, until the
model answers DONE, ``max_steps`` is reached, or the same failing action repeats three
times (``stuck``).

* A failed action (element gone, hidden, disabled, covered, timeout, navigation refused)
  is an observation for the next step: its error goes into the history the action prompt
  shows. An unusable model reply (after the one re-ask) is a failed step with no action;
  nothing is defaulted.
* A model endpoint that is down, or a page that cannot be captured, ends the run with
  status ``error``.
* ``dry_run``: actions are predicted and reported, never executed (the page stays as it is).
* Per-step accounting uses ``client.scoped()``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webagent.agent import elements
from webagent.agent.decide import Decision, decide
from webagent.agent.record import Recorder
from webagent.agent.trace import TraceWriter, scrub
from webagent.browser import REDACTED, Action, ActionResult
from webagent.errors import UserError
from webagent.html import split_snippets
from webagent.llm.client import LLMClient
from webagent.replay.fingerprint import target_of
from webagent.memory import word_count
from webagent.web.action import LiveAction
from webagent.web.memory import GistReuse

STATUSES = ("done", "max_steps", "stuck", "error")
STUCK_REPEATS = 3


@dataclass
class AgentOptions:
    max_steps: int = 15
    lookup: str = "auto"          # "auto": skip gists and look-up when the whole page fits; "always"
    max_lookup: int = 3
    context_tokens: int = 8192
    act_on: str = "looked-up"
    depth: int | str = "auto"
    budget_words: int = 300
    dry_run: bool = False
    screenshots: bool = True


@dataclass
class AgentResult:
    status: str
    answer: str | None = None
    steps: int = 0
    trace_dir: str | None = None
    usage: dict = field(default_factory=dict)
    error: str | None = None
    failed_steps: int = 0

    def to_json(self) -> dict:
        return {"status": self.status, "answer": self.answer, "steps": self.steps, "trace_dir": self.trace_dir,
                "usage": self.usage, "error": self.error, "failed_steps": self.failed_steps}


def to_browser_action(action: LiveAction) -> Action:
    op = action.operation
    if op == "SCROLL":
        return Action(op="SCROLL", element_id=action.element_id or None,
                      direction="up" if action.value.lower() == "up" else "down")
    if op == "GOTO":
        return Action(op="GOTO", value=action.value)
    if op == "BACK":
        return Action(op="BACK")
    return Action(op=op, element_id=action.element_id, value=action.value or None,
                  press_enter=action.press_enter and op == "TYPE")


class _Stuck:
    """Counts the same failing action (or the same unusable reply) in a row."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.count = 0

    def see(self, key: tuple, failed: bool) -> bool:
        if not failed:
            self.key, self.count = None, 0
            return False
        self.count = self.count + 1 if key == self.key else 1
        self.key = key
        return self.count >= STUCK_REPEATS


async def run_agent(
    browser, client: LLMClient, task: str, *, options: AgentOptions | None = None,
    trace: TraceWriter | None = None, recorder: Recorder | None = None,
    progress: Callable[[str], None] | None = None,
    after_step: Callable[[], Awaitable[str | None]] | None = None,
) -> AgentResult:
    """Run ``task`` from the browser's current page. ``after_step`` (MiniWoB) may end the
    run after an executed action by returning a reason (the run is then ``done``)."""
    options = options or AgentOptions()
    client = client.scoped()  # this run's usage (the caller's client may serve several runs)
    result = AgentResult(status="max_steps", trace_dir=str(trace.folder) if trace else None)
    history: list[str] = []
    reuse = GistReuse()
    secrets: set[str] = trace.secrets if trace else set()
    stuck = _Stuck()
    say = progress or (lambda message: None)
    try:
        for n in range(1, options.max_steps + 1):
            record, outcome = await _step(browser, client, task, n, options, history, reuse, secrets, trace, recorder)
            result.steps = n
            action = outcome["action"]
            failed = not outcome["ok"]
            result.failed_steps += failed
            say(f"step {n}: {record['url']}  {record['action_text']}  -> {record['result_text']}")
            if outcome["fatal"]:
                result.status, result.error = "error", outcome["fatal"]
                break
            if action is not None and action.operation == "DONE":
                result.status, result.answer = "done", scrub(action.value, secrets) or None
                break
            key = (action.operation, action.element_id, action.value) if action else ("NONE",)
            # A dry run never changes the page: the same prediction three times is stuck too.
            if stuck.see(key, failed or options.dry_run):
                result.status, result.error = "stuck", f"the same failing action {STUCK_REPEATS} times: {record['action_text']}"
                break
            if after_step is not None and not options.dry_run:
                reason = await after_step()
                if reason:
                    result.status, result.answer = "done", reason
                    break
    except BaseException as exc:  # the trace says how the run ended, then the error goes on
        result.status = "error" if isinstance(exc, Exception) else "interrupted"
        result.error = f"{type(exc).__name__}: {exc}" if isinstance(exc, Exception) else "interrupted"
        raise
    finally:
        result.usage = client.usage.to_dict()
        if trace is not None:
            trace.write_run({"task": task, **result.to_json(), "options": vars(options)})
    return result


async def _step(browser, client, task, n, options, history, reuse, secrets, trace, recorder):
    step_client = client.scoped()
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    record: dict = {"step": n}
    from webagent.browser.capture import CaptureError

    try:
        obs = await browser.observe()
    except CaptureError as exc:
        return _fatal(record, trace, f"the page could not be captured: {exc}")
    times["observe_s"] = time.perf_counter() - t0
    shot = None
    if trace is not None and options.screenshots:
        t0 = time.perf_counter()
        try:
            shot = await browser.page.screenshot(full_page=True, timeout=5000)
        except Exception:  # noqa: BLE001 - a step without a picture is still a step
            shot = None
        times["screenshot_s"] = time.perf_counter() - t0
    try:
        snippets = split_snippets(obs.cleaned_html, depth=options.depth, budget_words=options.budget_words)
    except UserError as exc:
        snippets = []
        problem = f"the page has nothing to act on: {exc}"
    valid_ids = {i for s in snippets for i in s.ids}
    record.update(url=obs.url, title=obs.title, snippets=len(snippets),
                  raw_words=sum(s.words for s in snippets), frame_errors=obs.frame_errors, truncated=obs.truncated)
    decision: Decision | None = None
    if snippets:
        decision = await decide(step_client, snippets, task=task, history=history, valid_ids=valid_ids,
                                lookup=options.lookup, max_lookup=options.max_lookup,
                                context_tokens=options.context_tokens, act_on=options.act_on, reuse=reuse,
                                url=obs.url, title=obs.title)
        times.update(decision.times)
        problem = decision.outcome.problem
    action = decision.outcome.action if decision else None
    secret = bool(action and action.element_id and action.operation == "TYPE"
                  and (ref := obs.elements.get(action.element_id)) is not None and ref.is_password)
    if secret and action.value:
        secrets.add(action.value)
    description = elements.describe(obs.cleaned_html, action.element_id) if action and action.element_id else ""
    action_text = _action_text(action, description, secret) if action else f"no usable action ({problem})"
    fatal = None
    if decision is not None and decision.endpoint_failed:
        fatal = f"the model endpoint failed: {problem}"
    executed: ActionResult | None = None
    ok = False
    if action is None:
        result_text = "failed: no usable action"
    elif action.operation == "DONE":
        ok, result_text = True, "done" + (f": {scrub(action.value, secrets)}" if action.value else "")
    elif options.dry_run:
        ok, result_text = True, "not executed (dry run)"
    else:
        t0 = time.perf_counter()
        executed = await browser.act(to_browser_action(action), obs)
        times["execute_s"] = time.perf_counter() - t0
        ok = executed.ok
        result_text = "ok" if ok else f"failed: {executed.error}"
        if executed.note:
            result_text += f" ({executed.note})"
        if ok and recorder is not None and action.operation in ("CLICK", "TYPE", "SELECT"):
            recorder.add(obs, action.operation, action.element_id, action.value, secret)
    history.append(scrub(f"{n}. {action_text} -> {result_text}", secrets))
    record.update(
        context_words=decision.context_words if decision else 0,
        lookup_skipped=decision.skipped_lookup if decision else None,
        gists=decision.gists if decision else [], gist_fallbacks=decision.gist_fallbacks if decision else [],
        gists_reused=decision.gists_reused if decision else 0,
        lookup=decision.lookup if decision else None,
        expanded=decision.expanded if decision else [],
        dropped_for_context=decision.dropped_for_context if decision else [],
        action=action.model_dump() if action else None, action_text=action_text, element=description or None,
        problem=problem, replies=decision.outcome.replies if decision else [],
        result=executed.model_dump() if executed else None, result_text=result_text, ok=ok,
        dry_run=options.dry_run, failures=decision.failures if decision else 1,
        usage=step_client.usage.to_dict(), times={k: round(v, 4) for k, v in times.items()},
    )
    record["target"] = target_of(obs, action) if executed is not None and ok else None  # replay: the element, findable again
    if secret and record["action"]:
        record["action"]["value"] = REDACTED
    if trace is not None:
        box = elements.box(obs.raw_html, action.element_id) if action and action.element_id else None
        record = trace.write_step(record, shot, box)
    return record, {"action": action, "ok": ok, "fatal": fatal}


def _action_text(action: LiveAction, description: str, secret: bool) -> str:
    shown = action.model_copy(update={"value": REDACTED}) if secret else action
    text = shown.describe()
    return f"{text} {description}" if description else text


def _fatal(record: dict, trace, message: str):
    record.update(url="", title="", action=None, action_text="(none)", result_text=message, ok=False,
                  problem=message, fatal=message)
    if trace is not None:
        record = trace.write_step(record)
    return record, {"action": None, "ok": False, "fatal": message}
