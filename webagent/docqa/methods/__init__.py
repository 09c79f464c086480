"""Reading methods for document QA, all on the same pages with the same model.

Every method is `async run(client, state, question, variant, opts) -> MethodResult`,
registered here by name. A name may carry a number after "@": the most pages to look up
(readagent-p/s), pages retrieved (bm25, neural) or words kept (truncate-first/last).

readagent-p@k     gists, then 1..k pages looked up in one call and expanded in place
                  (NarrativeQA: asked in order of importance, added while they fit)
readagent-s@k     gists, then 1..k pages looked up one at a time until STOP
gistmem           the gists only
full              the whole text, cut to the context when it does not fit (reported as cut)
truncate-first@N  the first N words (default: the context size)
truncate-last@N   the last N words
bm25@k, neural@k  the top-k pages by BM25 (bm25s) / all-MiniLM-L6-v2, in document order
memwalker         MemWalker: a tree of summaries navigated from the root
summary-tree      a left-heavy binary summary tree; the model refines a cut
kv-memory         the model reads chunk by chunk with list-keys / read / write tools
kv-memory-rolling the same tools, one rolling "current-summary" key
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webagent.errors import UserError
from webagent.variant import Variant as BaseVariant

METHODS = (
    "readagent-p",
    "readagent-s",
    "gistmem",
    "full",
    "truncate-first",
    "truncate-last",
    "bm25",
    "neural",
    "memwalker",
    "summary-tree",
    "kv-memory",
    "kv-memory-rolling",
)
NUMBERED = {"readagent-p": 5, "readagent-s": 5, "bm25": 3, "neural": 3, "truncate-first": None, "truncate-last": None}
# `all` runs these (neural needs the optional extra; name it to run it).
DEFAULT_METHODS = (
    "readagent-p",
    "readagent-s",
    "gistmem",
    "full",
    "truncate-first",
    "truncate-last",
    "bm25",
    "memwalker",
    "summary-tree",
    "kv-memory",
    "kv-memory-rolling",
)


class Variant(BaseVariant):
    @classmethod
    def parse(cls, text: str, max_pages: int | None = None) -> Variant:
        method, k = cls.split(text, METHODS, NUMBERED)
        if k is not None or method not in NUMBERED:
            return cls(method, k)
        default = max_pages if max_pages and method.startswith("readagent") else NUMBERED[method]
        return cls(method, default)


def parse_methods(text: str, max_pages: int | None = None) -> list[Variant]:
    names = list(DEFAULT_METHODS) if text.strip() == "all" else [t for t in text.split(",") if t.strip()]
    if not names:
        raise UserError("--method is empty")
    return list(dict.fromkeys(Variant.parse(n, max_pages) for n in names))


NO_ANSWER = "no answer"  # what a method says when it has nothing to answer from (never a guess)


@dataclass(frozen=True)
class MethodOptions:
    context_words: int = 6000  # the context budget, in words
    importance_lookup: bool = False  # NarrativeQA: look-ups ordered by importance, added while they fit
    max_children: int = 8  # MemWalker: children per node
    max_refinements: int = 8  # summary tree: "INSUFFICIENT DETAIL" refinements per question
    max_tool_calls: int = 6  # kv-memory: tool calls per chunk


@dataclass
class MethodResult:
    answer: str
    option: int | None = None
    context_words: int = 0  # the longest in-context text over the method's calls (the paper's CR)
    lookups: list[int] = field(default_factory=list)  # pages looked up / retrieved / read
    failures: int = 0  # unusable replies after the re-ask, failed calls, failed navigations
    problem: str | None = None
    notes: dict = field(default_factory=dict)  # method-specific counts (cut, reverts, refinements...)


Runner = Callable[..., Awaitable[MethodResult]]


def runner_for(method: str) -> Runner:
    if method in ("readagent-p", "readagent-s", "gistmem"):
        from webagent.docqa.methods.readagent import run
    elif method in ("full", "truncate-first", "truncate-last", "bm25", "neural"):
        from webagent.docqa.methods.baselines import run
    elif method == "memwalker":
        from webagent.docqa.methods.memwalker import run
    elif method == "summary-tree":
        from webagent.docqa.methods.summary_tree import run
    else:
        from webagent.docqa.methods.kv_memory import run
    return run
