"""A method as the evaluation CLIs name it: ``bm25@5`` is BM25 with k = 5, ``gistmem``
has no number. Mind2Web (``mind2web.methods``) and document QA (``webagent.docqa.methods``)
each subclass ``Variant`` with their own method table and defaults."""

from __future__ import annotations

from dataclasses import dataclass

from webagent.errors import UserError


@dataclass(frozen=True)
class Variant:
    method: str
    k: int | None = None

    @property
    def name(self) -> str:
        return self.method if self.k is None else f"{self.method}@{self.k}"

    @property
    def top_k(self) -> int:
        """``k`` of a numbered method (``parse`` always gives one its default)."""
        if self.k is None:
            raise ValueError(f"method {self.method!r} has no @k")
        return self.k

    @staticmethod
    def split(text: str, methods, numbered) -> tuple[str, int | None]:
        """``(method, k)`` of ``method[@k]``; ``k`` is ``None`` when not given. Raises
        ``UserError`` for an unknown method, an @k on a method without one, or a k that is
        not a positive whole number."""
        method, _, k = text.strip().partition("@")
        if method not in methods:
            raise UserError(f"unknown method {method!r}; choose from {', '.join(methods)} (or 'all')")
        if not k:
            return method, None
        if method not in numbered:
            raise UserError(f"method {method!r} takes no @k")
        if not k.isdigit() or int(k) < 1:
            raise UserError(f"method {method!r} needs a positive k, e.g. {method}@5 (got {text.strip()!r})")
        return method, int(k)
