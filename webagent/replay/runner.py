"""Replay a workflow in a fresh browser, and repair only what changed.

For each recorded step: observe the live page, check it is the recorded one (path or
title), find the element again from its fingerprint (``match.find``: a unique best
above a threshold) and act on its new id through the step engine (``trace.engine``, as a
run and a skill do). When the page is not the recorded one, the element is not found
uniquely or the action fails, that step alone goes to the model as replay's repair policy
says (``engine.REPLAY``: up to 3 model actions, one of which may be another operation),
through the same decision path as ``webagent run`` (``webagent.agent.decide.decide``), with
the recorded step as a hint ("last time: TYPE "Night Trains" into [searchbox] ...").
The repaired step replaces the old one in the new ``workflow.json`` written to the
replay's trace folder (and to the store when the workflow came from there), so the
next replay is model-free again. ``no_model=True`` fails instead, naming the step.

The model is opened only when a step needs it: a replay where nothing changed starts
no model server and makes no model call.

Each step's record is built as a run's is (``webagent.trace.record.step_record``), with the
replay's own fields (``replay``: replayed, repaired or failed; ``workflow_step``,
``recorded``, ``match``; a repair's ``hint`` and ``miss``). The agent is reached through its
package's entry points only (``webagent.agent``: the options, one decision on one page, the
browser action of an action).
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from webagent.agent import AgentOptions, AgentResult, decide_page, elements, to_browser_action
from webagent.agent.report import write_report
from webagent.browser import REDACTED
from webagent.errors import UserError
from webagent.llm.endpoint import EndpointOptions, open_client
from webagent.replay import store
from webagent.replay.report import annex
from webagent.trace import params as P
from webagent.trace import workflow as W
from webagent.trace.engine import REPLAY, execute, hint, locate, same_page
from webagent.trace.fingerprint import PageRef, fingerprint_of, url_pattern
from webagent.trace.match import Match
from webagent.trace.record import StepRecord, history_line, step_record
from webagent.trace.step import RecordedStep
from webagent.trace.writer import TraceWriter, screenshot, scrub
from webagent.web.live_action import LiveAction


@dataclass
class ReplayResult(AgentResult):
    replayed: int = 0
    repaired: int = 0
    model_calls: int = 0
    wall_s: float = 0.0
    startup_s: float = 0.0  # browser start and the first page
    misses: list[dict] = field(default_factory=list)  # {step, why, repaired}
    workflow: W.Workflow | None = None  # the program after repairs
    saved_to: str | None = None

    def to_json(self) -> dict:  # every field but the workflow (written beside it), the times rounded
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "workflow"}
        return data | {"wall_s": round(self.wall_s, 3), "startup_s": round(self.startup_s, 3)}


def _rebase(url: str, old_start: str, new_start: str) -> str:
    """``url`` of the recorded site moved to where this replay started (another host,
    port or folder), when it was under the recorded start's folder."""
    old, new = urlsplit(old_start), urlsplit(new_start)
    parts = urlsplit(url)
    if (parts.scheme, parts.netloc) != (old.scheme, old.netloc):
        return url
    old_dir, new_dir = old.path.rsplit("/", 1)[0] + "/", new.path.rsplit("/", 1)[0] + "/"
    path = new_dir + parts.path[len(old_dir) :] if parts.path.startswith(old_dir) else parts.path
    return urlunsplit((new.scheme, new.netloc, path, parts.query, parts.fragment))


class Replay:
    """One replay of ``workflow`` (see the module docstring)."""

    def __init__(
        self,
        workflow: W.Workflow,
        *,
        trace_dir: str | Path,
        params: dict[str, str] | None = None,
        url: str | None = None,
        endpoint=None,
        client=None,
        no_model: bool = False,
        allow_domains: list[str] | None = None,
        headed: bool = False,
        cdp_url: str | None = None,
        options: AgentOptions | None = None,
        store_name: str | None = None,
        progress=None,
    ):
        self.workflow = workflow
        self.trace_dir = Path(trace_dir)
        self.values = P.resolve(workflow.params, dict(params or {}))
        self.mapping = P.substitution(workflow.params, self.values)
        self.start = url or workflow.start_url
        self.endpoint, self.client, self.no_model = endpoint, client, no_model
        self.allow_domains = list(allow_domains or workflow.allow_domains)
        self.headed, self.cdp_url = headed, cdp_url
        self.options = options or AgentOptions()
        self.store_name = store_name
        self.say = progress or (lambda message: None)
        self.task = P.apply(workflow.task, self.mapping)
        self._client = None
        self._stack: AsyncExitStack | None = None
        self._times: dict[str, float] = {}
        self.history: list[str] = []
        self.n = 0  # trace records written
        self.failed = 0

    # -- the model, opened on first need ------------------------------------------------
    async def _model(self):
        if self._client is None:
            if self.client is not None:
                self._client = self.client.scoped()
            else:
                self.say("opening the model for a repair")
                opened = await self._stack.enter_async_context(open_client(self.endpoint or EndpointOptions()))
                self._client = opened.scoped()
        return self._client

    # -- pages and steps --------------------------------------------------------------------
    def _page(self, step: RecordedStep) -> PageRef:
        """The page ``step`` was recorded on, where this replay runs it (its site, its values)."""
        url = _rebase(step.page.url, self.workflow.start_url, self.start)
        return PageRef(url=url, title=P.apply(step.page.title, self.mapping))

    async def _observe(self, step: RecordedStep | None):
        t0 = time.perf_counter()
        obs = await self.browser.observe()
        if step is not None and same_page(self._page(step), obs):
            await self.browser.settle()  # a navigation may still be under way
            obs = await self.browser.observe()
        self._times = {"observe_s": time.perf_counter() - t0}
        return obs, await screenshot(self.browser, self._times) if self.options.screenshots else None

    def _write(
        self,
        obs,
        shot,
        step: RecordedStep,
        i: int,
        mark: str,
        action: LiveAction | None,
        *,
        times: dict[str, float],
        match: Match | None = None,
        usage: dict | None = None,
        **fields,
    ) -> StepRecord:
        """The record of replay step ``self.n + 1`` (recorded step ``i``), built as a run's
        step's is, written to the trace; ``fields``: ``step_record``'s (``result_text``, ``ok``,
        ``executed``, ``secret``) and the record's."""
        self.n += 1
        element_id = action.element_id if action is not None else ""
        record = step_record(
            self.n,
            action,
            url=obs.url,
            title=obs.title,
            obs=obs,
            description=elements.describe(obs.cleaned_html, element_id) if element_id else "",
            times={**self._times, **times},
            usage=usage or {},
            replay=mark,
            workflow_step=i + 1,
            recorded=step.text or step.describe(),
            match=match.to_json() if match is not None else None,
            param=step.param,
            **fields,
        )
        box = elements.box(obs.raw_html, element_id) if element_id else None
        record = self.trace.write_step(record, shot, box)
        self.failed += not record.ok
        self.history.append(scrub(history_line(record), self.trace.secrets))
        return record

    async def _do(self, obs, shot, step: RecordedStep, i: int, mark: str, action: LiveAction, times: dict, **fields):
        """Carry out ``action`` (a DONE only ends the replay) and write its record, marked
        ``mark`` (``failed`` when it failed); (the browser's result, ``None`` for a DONE; the record)."""
        if action.operation == "DONE":
            done = "done" + (f": {action.value}" if action.value else "")
            return None, self._write(obs, shot, step, i, mark, action, result_text=done, ok=True, times=times, **fields)
        act = action  # the record keeps the step's own address
        if action.operation == "GOTO":  # the recorded site, where this replay started
            act = action.model_copy(update={"value": _rebase(action.value, self.workflow.start_url, self.start)})
        ran = await execute(self.browser, obs, to_browser_action(act))
        executed = ran.result
        text = "ok" if executed.ok else f"failed: {executed.error}"
        if executed.note:
            text += f" ({executed.note})"
        times = {**times, "execute_s": ran.execute_s}
        mark = mark if executed.ok else "failed"
        record = self._write(
            obs, shot, step, i, mark, action, executed=executed, result_text=text, ok=executed.ok, times=times, **fields
        )
        return executed, record

    # -- the run ----------------------------------------------------------------------------
    async def run(self) -> ReplayResult:
        from webagent.agent.episode import check_url
        from webagent.browser import BrowserSession
        from webagent.browser.capture import CaptureError

        started = time.perf_counter()
        check_url(self.start)
        self.trace = trace = TraceWriter(self.trace_dir)
        for name, spec in self.workflow.params.items():
            if spec.get("source") == "password" and self.values.get(name):
                trace.secrets.add(self.values[name])
        result = ReplayResult(status="max_steps", trace_dir=str(trace.folder))
        new_steps: list[RecordedStep] = []
        try:
            async with AsyncExitStack() as stack:
                self._stack = stack
                self.browser = browser = await stack.enter_async_context(
                    BrowserSession(headed=self.headed, cdp_url=self.cdp_url, allowed_domains=self.allow_domains)
                )
                opened = await browser.open(self.start)
                result.startup_s = time.perf_counter() - started
                if not opened.ok:
                    raise UserError(
                        f"cannot open {self.start}: {opened.error} (is the site served there? --url URL "
                        "starts the replay elsewhere; --demo serves the demo shop)"
                    )
                self.say(f"replaying {len(self.workflow.steps)} steps from {browser.page.url}; trace in {trace.folder}")
                try:
                    await self._steps(result, new_steps)
                except CaptureError as exc:
                    result.status, result.error = "error", f"the page could not be captured: {exc}"
                with suppress(Exception):  # the page may be gone
                    result.final_url, result.final_title = browser.page.url, await browser.page.title()
        except BaseException as exc:
            result.status = "error" if isinstance(exc, Exception) else "interrupted"
            result.error = f"{type(exc).__name__}: {exc}" if isinstance(exc, Exception) else "interrupted"
            raise
        finally:
            result.usage = self._client.usage.to_dict() if self._client is not None else {"calls": 0}
            result.model_calls = int(result.usage.get("calls", 0))
            result.wall_s = time.perf_counter() - started
            result.steps, result.failed_steps = self.n, self.failed
            if result.status == "done":
                source = {"trace": str(trace.folder), "replay_of": self.workflow.source, "answer": result.answer}
                result.workflow = self.workflow.model_copy(deep=True, update={"steps": new_steps, "source": source})
                W.save(result.workflow, trace.folder)
                if self.store_name and result.repaired:
                    store.save(self.store_name, result.workflow, note=f"{result.repaired} steps repaired")
                    result.saved_to = str(store.folder(self.store_name))
            trace.write_run(
                {"task": self.task, **result.to_json(), "replay": self._summary(result), "options": vars(self.options)}
            )
            write_report(trace.folder, "replay", annex)
        return result

    def _summary(self, result: ReplayResult) -> dict:
        shown = {
            n: ("(secret)" if spec.get("source") == "password" else self.values.get(n))
            for n, spec in self.workflow.params.items()
        }
        return {
            "source": self.workflow.source,
            "store_name": self.store_name,
            "start_url": self.start,
            "params": shown,
            "no_model": self.no_model,
            "recorded_steps": len(self.workflow.steps),
            "replayed": result.replayed,
            "repaired": result.repaired,
            "model_calls": result.model_calls,
            "wall_s": round(result.wall_s, 3),
        }

    async def _steps(self, result: ReplayResult, new_steps: list[RecordedStep]) -> None:
        steps, policy = self.workflow.steps, REPLAY
        i, model_actions = 0, 0
        while i < len(steps):
            step = steps[i]
            here = P.apply(step, self.mapping)  # the step with this replay's values
            obs, shot = await self._observe(step)
            t0 = time.perf_counter()
            found = locate(here, obs, policy, self._page(step))
            if found.match is not None:
                self._times["match_s"] = time.perf_counter() - t0
            if not (miss := found.miss):
                # as recorded or given (not a model's reply: nothing in it is checked against the page or trimmed)
                action = LiveAction.model_construct(
                    operation=step.op,
                    element_id=found.element_id or "",
                    value=P.step_value(step, self.values, self.mapping),
                    press_enter=step.press_enter,
                )
                executed, _ = await self._do(
                    obs, shot, step, i, "replayed", action, {}, match=found.match, secret=step.secret
                )
                if executed is None or executed.ok:  # a DONE, or an action that worked
                    new_steps.append(step)
                    result.replayed += 1
                    if executed is None:
                        result.status, result.answer = "done", scrub(action.value, self.trace.secrets) or None
                        return
                    i += 1
                    continue
                miss = f"the action failed: {executed.error}"
            # A miss: this step alone goes to the model (or the replay stops here).
            where = f"step {i + 1} ({here.describe()})"
            result.misses.append({"step": i + 1, "why": miss, "repaired": False})
            self.say(f"{where}: {miss}")
            if self.no_model:
                result.status, result.error = "error", f"{where}: {miss} (--no-model: not asking the model)"
                return
            repaired = None
            for attempt in range(policy.attempts):
                if model_actions >= self.options.max_steps:
                    result.status, result.error = "max_steps", f"{where}: {self.options.max_steps} model actions used"
                    return
                model_actions += 1
                if attempt:
                    obs, shot = await self._observe(None)
                repaired = await self._repair(here, step, i, miss, result, obs, shot)
                if repaired is not None or result.status == "error":
                    break
            if result.status == "error":
                return
            if repaired is None:
                result.status, result.error = (
                    "stuck",
                    f"{where}: not repaired after {policy.attempts} model actions ({miss})",
                )
                return
            result.misses[-1]["repaired"] = True
            result.repaired += 1
            new_steps.append(repaired)
            if result.status == "done":
                return
            if policy.verdict(step, repaired.op) == "next":
                i += 1  # the model's action takes the step's place; otherwise the step is tried again

    def _page_of(self, obs) -> PageRef:
        url = P.unapply(_rebase(obs.url, self.start, self.workflow.start_url), self.mapping)
        return PageRef(url=url, pattern=url_pattern(url), title=P.unapply(obs.title, self.mapping))

    async def _repair(self, here: RecordedStep, step: RecordedStep, i, miss, result, obs, shot) -> RecordedStep | None:
        """One model action for recorded step ``i`` (``here``: with this replay's values); the new
        step when it worked (a DONE ends the replay)."""
        client = (await self._model()).scoped()
        history = [*self.history, REPLAY.line(here, miss)]
        decision = await decide_page(client, obs, self.task, history, self.options, can_back=len(self.history) > 0)
        times = dict(decision.times) if decision is not None else {}
        action = decision.outcome.action if decision is not None else None
        problem = decision.outcome.problem if decision is not None else "the page has nothing to act on"
        repair = {
            "hint": hint(here),
            "miss": miss,
            "replies": decision.outcome.replies if decision else [],
            "problem": problem,
            "problem_kind": decision.outcome.problem_kind if decision is not None else "nothing_to_act_on",
            "usage": client.usage.to_dict(),
        }
        if decision is not None and decision.endpoint_failed:
            result.status, result.error = "error", f"the model endpoint failed: {problem}"
        if action is None:
            no_action = f"failed: no usable action ({problem})"
            self._write(obs, shot, step, i, "failed", None, result_text=no_action, ok=False, times=times, **repair)
            return None
        op, element_id, value = action.operation, action.element_id or None, action.value or ""
        secret = bool(
            element_id and op == "TYPE" and (ref := obs.elements.get(element_id)) is not None and ref.is_password
        )
        if secret and value:
            self.trace.secrets.add(value)
        executed, record = await self._do(obs, shot, step, i, "repaired", action, times, secret=secret, **repair)
        if executed is None:  # DONE
            result.status, result.answer = "done", scrub(value, self.trace.secrets) or None
            return RecordedStep(op="DONE", value=P.unapply(result.answer or "", self.mapping), page=self._page_of(obs))
        if not executed.ok:
            return None
        kept: str = REDACTED if secret else P.unapply(value, self.mapping)
        new = RecordedStep(
            op=op,  # type: ignore[arg-type]
            value=kept,
            press_enter=action.press_enter,
            page=self._page_of(obs),
            text=record.action_text,
            repaired=True,
        )
        if element_id:
            new.target = P.unapply(fingerprint_of(obs, element_id), self.mapping)
        if secret:
            new.secret = True
        if step.param and (secret or (self.workflow.params.get(step.param, {}).get("default") or "\0") in kept):
            new.param = step.param
        return new
