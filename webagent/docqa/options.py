"""How a document is read and asked (``QAOptions``): every document-QA option, once, with its
one default. `webagent ask`, `ask --method`, `api.ask`, `qa-eval` and the methods all read it;
qa-eval pins it whole in OUT/config.json, so a changed option is named when a resume is refused."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from webagent.docqa.methods import Variant
from webagent.errors import UserError

Lookup = Literal["parallel", "sequential"]  # ReadAgent-P (pages chosen in one call) or -S (one at a time)
Pagination = Literal["llm", "uniform"]
LOOKUPS: tuple[str, ...] = get_args(Lookup)
PAGINATIONS: tuple[str, ...] = get_args(Pagination)
READAGENT: dict[str, Lookup] = {"readagent-p": "parallel", "readagent-s": "sequential"}  # `ask`'s own look-ups
# Words per token of English prose, on the safe side: the context budget in words of a context in tokens.
WORDS_PER_TOKEN = 0.6


@dataclass(frozen=True)
class QAOptions:
    # pagination: the model's pause points between min_words and max_words; "uniform": fixed pages of
    # max_words (the paper's Table 5 ablation)
    min_words: int = 280
    max_words: int = 600
    pagination: Pagination = "llm"
    single_pass: bool = False  # the pause-point call also writes the gist of the page it closes (issue 23)
    gist_model: str | None = None  # --gist-model: the model that paginates and gists (None: the main model)
    conditional_gist: bool = False  # gist with the question in view (paper Appendix G.1; `webagent ask`)
    # look-up (ReadAgent): how pages are chosen and the most chosen (a method's @k overrides max_pages)
    lookup: Lookup = "parallel"
    max_pages: int = 5
    importance_lookup: bool = False  # NarrativeQA: look-ups ordered by importance, added while they fit
    # budgets: the model's context (`webagent ask`: looked-up pages that would overflow it stay gists)
    # and the methods' budget in words (the paper's 6k words for PaLM 2-L)
    context_tokens: int = 8192
    context_words: int = 6000
    max_children: int = 8  # MemWalker: children per node
    max_refinements: int = 8  # summary tree: "INSUFFICIENT DETAIL" refinements per question
    max_tool_calls: int = 6  # kv-memory: tool calls per chunk

    def __post_init__(self) -> None:
        """Options that cannot be read together are one clear line, named by their flags."""
        if self.pagination not in PAGINATIONS:
            raise UserError(f"--pagination must be one of {', '.join(PAGINATIONS)} (got {self.pagination!r})")
        if self.lookup not in LOOKUPS:
            raise UserError(f"--lookup must be one of {', '.join(LOOKUPS)} (got {self.lookup!r})")
        if self.max_pages < 1:
            raise UserError(f"--max-pages must be at least 1 (got {self.max_pages})")
        if self.context_tokens < 512:
            raise UserError(f"--context-tokens must be at least 512 (got {self.context_tokens})")
        if not 0 < self.min_words < self.max_words:
            raise UserError(f"need 0 < --min-words < --max-words (got {self.min_words} and {self.max_words})")
        if self.single_pass and self.pagination != "llm":
            raise UserError("--single-pass gists pages while the model paginates them: it needs --pagination llm")
        if self.single_pass and self.conditional_gist:
            raise UserError(
                "--single-pass gists pages while the model paginates them, before any question: "
                "it cannot be used with --conditional-gist"
            )

    def for_readagent(self, method: str) -> QAOptions | None:
        """These options for `method` when it is ReadAgent's own (`webagent ask`'s gist memory):
        readagent-p / readagent-s name the look-up, an @k the most pages; None for another method
        (a name the registry does not know, or a bad @k, is one clear line)."""
        variant = Variant.parse(method, self.max_pages)
        if variant.method not in READAGENT:
            return None
        return replace(self, lookup=READAGENT[variant.method], max_pages=variant.k or self.max_pages)

    def words_for_context(self) -> QAOptions:
        """These options with the methods' word budget set to what fits `context_tokens`: `webagent
        ask --method` and `api.ask` take the model's context in tokens, qa-eval the budget in words."""
        return replace(self, context_words=int(self.context_tokens * WORDS_PER_TOKEN))
