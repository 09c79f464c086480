"""A method as the evaluation CLIs name it: ``bm25@5`` is BM25 with k = 5, ``gistmem``
has no number. Mind2Web (``mind2web.methods``) and document QA (``webagent.docqa.methods``)
each list their methods once, as ``Method`` records in a ``Registry`` (name, one-line
summary, whether it takes @k and its default, whether ``all`` runs it, where it runs), and
subclass ``Variant`` to parse their names."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webagent.errors import UserError


@dataclass(frozen=True)
class Method:
    name: str
    summary: str  # one line: what the model reads (the docs' and --help's table)
    numbered: bool = False  # takes @k
    default_k: int | None = None  # k when none is given (None: the caller's default, or required)
    in_all: bool = True  # ``all`` runs it
    run: str = ""  # "module:function" that runs it, imported only when it runs


class Registry:
    """The methods of one evaluation, in their order: listed once, read by the parser, the
    runner, ``all`` and the docs table."""

    def __init__(self, methods: Sequence[Method]):
        self.methods = tuple(methods)
        self.by_name = {m.name: m for m in self.methods}
        if len(self.by_name) != len(self.methods):
            raise ValueError("two methods share a name")

    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    def numbered(self) -> dict[str, int | None]:
        return {m.name: m.default_k for m in self.methods if m.numbered}

    def in_all(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods if m.in_all)

    def get(self, name: str) -> Method:
        method = self.by_name.get(name)
        if method is None:
            raise UserError(f"unknown method {name!r}; choose from {', '.join(self.by_name)} (or 'all')")
        return method

    def runner(self, name: str) -> Any:
        """The function that runs ``name`` (its module imported now: a method's dependencies
        load only when it runs)."""
        module, _, function = self.get(name).run.partition(":")
        return getattr(importlib.import_module(module), function)

    def rows(self) -> list[list[str]]:
        """(method, what the model reads) per method: the docs' table (``bench/render_docs.py``'s
        ``methods`` renderer)."""
        return [
            [f"`{m.name}@k`" if m.numbered else f"`{m.name}`", m.summary + ("" if m.in_all else " (not in `all`)")]
            for m in self.methods
        ]


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
