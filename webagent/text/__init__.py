"""Plain documents: reading files into paragraphs, and ReadAgent episode pagination."""

from webagent.text.paginate import (
    PaginationResult,
    PaginationStats,
    iter_pages,
    iter_pages_uniform,
    paginate,
    paginate_uniform,
    parse_label,
)
from webagent.text.read import document_hash, iter_paragraphs, split_paragraph, split_sentences

__all__ = [
    "PaginationResult",
    "PaginationStats",
    "document_hash",
    "iter_pages",
    "iter_pages_uniform",
    "iter_paragraphs",
    "paginate",
    "paginate_uniform",
    "parse_label",
    "split_paragraph",
    "split_sentences",
]
