"""What one live run carries from step to step (``RunState``): the page it is on, the
history the model reads, the view of the current observation rendered once, and what the
run did to each control, which the model's copy of the page says ("you typed this at step 2")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from webagent.agent.grounding import Grounds
from webagent.agent.loop_breaker import LoopBreaker
from webagent.agent.secrets import mask
from webagent.browser import Observation
from webagent.errors import UserError
from webagent.html import Snippet
from webagent.llm.cache import content_hash
from webagent.skills.lifecycle import SkillLifecycle
from webagent.trace.writer import scrub
from webagent.web.agent_view import LINE_ID, AgentView, view_snippets
from webagent.web.live_chat import LiveChat
from webagent.web.web_memory import GistReuse

if TYPE_CHECKING:
    from webagent.agent.options import AgentOptions

DID = {"TYPE": "typed", "SELECT": "chose", "CLICK": "clicked"}  # what the view says this run did to a control


@dataclass
class _Rendering:
    obs: Observation
    snippets: list[Snippet]
    view: AgentView | None  # None: the page has no view (``error`` says why)
    error: UserError | None = None


@dataclass
class RunState:
    """What one run carries from step to step."""

    task: str
    options: AgentOptions
    obs: Observation | None = None  # the current observation (taken after the last action)
    history: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)  # the pages observed, in order (all on the allowed sites)
    warning: str = ""
    page: str = ""  # the current page's key: it changes only when an action changes the page
    # the shapes of lines seen changing on their own, with nothing done (a clock): out of page keys,
    # or a page with a clock is a new state at every step and no return to it is ever seen
    moving: set[str] = field(default_factory=set)
    reuse: GistReuse = field(default_factory=GistReuse)
    secrets: set[str] = field(default_factory=set)  # values never written anywhere (traces scrub them)
    named: dict[str, str] = field(default_factory=dict)  # the model's placeholders: name -> value
    chat: LiveChat | None = None  # the conversation the prompt cache keeps (``webagent.web.live_chat``)
    forms_checked: set = field(default_factory=set)  # (page, form id) checked before sending
    # (element id, ``Control.describe``) -> what this run did to that control. The id tells apart
    # controls of one kind and name (six "Quantity" selects); the description keeps an id that a
    # new document reuses from carrying the note to another control.
    did: dict[tuple[str, str], str] = field(default_factory=dict)
    skills: SkillLifecycle = field(default_factory=SkillLifecycle)  # the site's skills: offers, done, could not start
    loops: LoopBreaker = field(default_factory=LoopBreaker)  # actions repeated, out of the choices where they were
    grounds: Grounds = field(
        default_factory=Grounds
    )  # what the pages showed and the run changed: DONE is checked on it
    # password field id -> a hash of what this run last typed into it (never the value itself)
    passwords_typed: dict[str, str] = field(default_factory=dict)
    # the last two renderings: a step renders the page it acts on, the capture just before
    # acting and the one after; keeping ids across a reload (``stable_ids``) reads the first
    # again after the second.
    _views: list[_Rendering] = field(default_factory=list)

    def _rendered(self, obs: Observation) -> _Rendering:
        """``obs`` in the agent view, rendered once per observation."""
        found = next((r for r in self._views if r.obs is obs), None)
        if found is None:
            try:
                snippets, view = view_snippets(
                    obs.cleaned_html, depth=self.options.depth, budget_words=self.options.budget_words
                )
                found = _Rendering(obs, snippets, view)
            except UserError as exc:  # nothing to act on: an empty view, and why
                found = _Rendering(obs, [], None, exc)
            if self.named:  # a secret the page shows (typed into a text field) reads as its placeholder
                found.snippets = [replace(s, text=mask(s.text, self.named)) for s in found.snippets]
            self._views = [*self._views[-1:], found]
        return found

    def view(self, obs: Observation) -> tuple[list[Snippet], AgentView]:
        """(snippets, view) of ``obs`` in the agent view; a ``UserError`` when the page has none
        (nothing to act on)."""
        rendered = self._rendered(obs)
        if rendered.view is None:
            assert rendered.error is not None
            raise rendered.error
        return rendered.snippets, rendered.view

    def controls(self, obs) -> dict:
        """The controls of ``obs`` by id (none when its view could not be built)."""
        view = self._rendered(obs).view
        return view.controls if view is not None else {}

    def annotated(self, snippets, controls: dict) -> list:
        """The snippets the model reads: a control this run typed into, chose or clicked says so
        ("you typed this at step 2"). Only the model's copy: change detection reads the page alone."""
        if not self.did:
            return snippets

        def note(line: str) -> str:
            m = LINE_ID.match(line)
            control = controls.get(m.group(1)) if m else None
            done = self.did.get(did_key(control)) if control else None
            return f"{line} ({done})" if done else line

        return [replace(s, text="\n".join(note(line) for line in s.text.split("\n"))) for s in snippets]

    def shown(self, obs) -> list[str]:
        """The page's lines as the model reads them."""
        return "\n".join(s.text for s in self._rendered(obs).snippets).splitlines()

    def lines(self, obs) -> list[str]:
        """What the model would see of a page, ids aside (a reload gives new ids)."""
        return LINE_ID.sub("[]", "\n".join(s.text for s in self._rendered(obs).snippets)).splitlines()

    def remember(self, line: str) -> None:
        """A step's line into the history the model reads, the user's secrets (``named``)
        masked. A value the model typed into a password field of its own accord (a made-up
        password) is masked only where it is written (``secrets``: the trace scrubs it): the
        model wrote it, so its own history hides nothing from it by masking it, and masking
        it there garbled the run (the 1.5B typed "status" as a password on a tracker, and every
        "status" in the addresses of its history read "********")."""
        self.history.append(scrub(line, set(self.named.values())))

    @property
    def can_back(self) -> bool:
        return bool(self.urls) and any(u != self.urls[-1] for u in self.urls[:-1])


def did_key(control) -> tuple[str, str]:
    """The key of ``RunState.did``: one control, however many share its kind and name."""
    return control.id, control.describe()


def page_key(url: str, lines: list[str], moving: set[str] | frozenset[str] = frozenset()) -> str:
    """A page by what the model sees of it (``RunState.lines``) and its URL, less the lines that
    change on their own (``moving``, by ``shape``: a clock's "Time left: 556 / 600sec")."""
    return content_hash(url, "\n".join(line for line in lines if shape(line) not in moving))


_DIGITS = re.compile(r"\d+")


def shape(line: str) -> str:
    """A line with its numbers as "#": a clock or a counter that ticks keeps its shape."""
    return _DIGITS.sub("#", line)
