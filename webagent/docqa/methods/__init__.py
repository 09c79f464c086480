"""Reading methods for document QA, all on the same pages with the same model.

Every method is `async run(client, state, question, variant) -> MethodResult` (the options are
``state.options``, `webagent.docqa.options`), listed
once in ``REGISTRY`` below (its name, what the model reads, its @k and default, whether
`all` runs it, where it runs); the parser, the runner, `all` and docs/docqa.md's table read
it. A name may carry a number after "@": the most pages to look up (readagent-p/s), pages
retrieved (bm25, neural) or words kept (truncate-first/last).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webagent.errors import UserError
from webagent.method_registry import Method, Registry
from webagent.method_registry import Variant as BaseVariant

_HERE = "webagent.docqa.methods"
REGISTRY = Registry(
    [
        Method(
            "readagent-p",
            "the gists, then 1..k pages looked up in one call and expanded in place; on NarrativeQA the "
            "look-up names pages by importance and pages are added while they fit `--context-words`",
            numbered=True,
            default_k=5,
            run=f"{_HERE}.readagent:run",
        ),
        Method(
            "readagent-s",
            "the gists, then 1..k pages looked up one at a time until STOP, expanded in place",
            numbered=True,
            default_k=5,
            run=f"{_HERE}.readagent:run",
        ),
        Method("gistmem", "the gists only", run=f"{_HERE}.readagent:run"),
        Method("full", "the whole text, cut at `--context-words` (reported as cut)", run=f"{_HERE}.baselines:run"),
        Method(
            "truncate-first",
            "the first k words (default: the context size)",
            numbered=True,
            run=f"{_HERE}.baselines:run",
        ),
        Method(
            "truncate-last",
            "the last k words (default: the context size)",
            numbered=True,
            run=f"{_HERE}.baselines:run",
        ),
        Method(
            "bm25",
            "the top-k pages by BM25 (bm25s), in document order",
            numbered=True,
            default_k=3,
            run=f"{_HERE}.baselines:run",
        ),
        Method(
            "neural",
            "the top-k pages by all-MiniLM-L6-v2, in document order (the `neural` extra)",
            numbered=True,
            default_k=3,
            in_all=False,
            run=f"{_HERE}.baselines:run",
        ),
        Method(
            "memwalker",
            "a tree of summaries (`--max-children`, default 8), navigated from the root with revert and working memory",
            run=f"{_HERE}.memwalker:run",
        ),
        Method(
            "summary-tree",
            'a left-heavy binary tree of pairwise summaries; the model refines a cut with "INSUFFICIENT '
            'DETAIL n" (at most `--max-refinements`, default 8)',
            run=f"{_HERE}.summary_tree:run",
        ),
        Method(
            "kv-memory",
            "notes the model wrote while reading chunk by chunk with `[list-keys]`, `[read]`, `[write]` tools",
            run=f"{_HERE}.kv_memory:run",
        ),
        Method(
            "kv-memory-rolling",
            'the same tools, one rolling "current-summary" key',
            run=f"{_HERE}.kv_memory:run",
        ),
    ]
)


class Variant(BaseVariant):
    @classmethod
    def parse(cls, text: str, max_pages: int | None = None) -> Variant:
        numbered = REGISTRY.numbered()
        method, k = cls.split(text, REGISTRY.names(), numbered)
        if k is not None or method not in numbered:
            return cls(method, k)
        default = max_pages if max_pages and method.startswith("readagent") else numbered[method]
        return cls(method, default)


def parse_methods(text: str, max_pages: int | None = None) -> list[Variant]:
    names = list(REGISTRY.in_all()) if text.strip() == "all" else [t for t in text.split(",") if t.strip()]
    if not names:
        raise UserError("--method is empty")
    return list(dict.fromkeys(Variant.parse(n, max_pages) for n in names))


NO_ANSWER = "no answer"  # what a method says when it has nothing to answer from (never a guess)


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
    """The ``run`` of ``method``; an unknown name is one clear line (``UserError``)."""
    return REGISTRY.runner(method)
