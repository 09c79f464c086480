"""The ReadAgent memory core: pages → gist memory → look-up. Knows nothing of HTML or files."""

from webagent.memory.gist import build_memory, gist_page
from webagent.memory.lookup import LookupResult, lookup_parallel, lookup_sequential, parse_next_page, parse_pages
from webagent.memory.pages import GistMemory, Page, compression_rate, first_words, last_words, word_count

__all__ = [
    "GistMemory",
    "LookupResult",
    "Page",
    "build_memory",
    "compression_rate",
    "first_words",
    "gist_page",
    "last_words",
    "lookup_parallel",
    "lookup_sequential",
    "parse_next_page",
    "parse_pages",
    "word_count",
]
