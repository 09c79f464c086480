"""What a recording saw of each page, kept beside its steps (``pages.jsonl`` in the trace
folder): the page before each step and the page the recording ended on, each as a few typed
facts (``PageFacts``), not the page itself. Skill learning reads them: the start page's
headings (a skill's landmarks), the links the site shows (which path segments vary: record
numbers, event slugs), a select's options (a parameter's values when the skill is called from
another page) and the texts a skill's last step made appear ("Ticket created", the new row)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from webagent.trace.fingerprint import parse, squash

FILE = "pages.jsonl"
MAX_TEXT = 120  # a longer text is a paragraph, not a message or a row's cell
MAX_TEXTS = 400
MAX_LINKS = 400
_SKIP = ("script", "style", "noscript", "template", "option", "select", "textarea")
_MESSAGE_ROLES = ("alert", "status")
_MENU_TAGS = ("nav", "header", "footer")
_MENU_MARKS = {
    "navigation",
    "nav",
    "navbar",
    "menu",
    "menubar",
    "sidebar",
    "breadcrumb",
    "nav-list",
    "nav-tabs",
    "nav-pills",
}
_MESSAGE_MARK = re.compile(r"message|alert|notice|success|flash|toast|error")


class PageFacts(BaseModel):
    """One page as a recording keeps it (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    step: int  # the step it was seen before (the last step's number + 1: the page the recording ended on)
    url: str = ""
    title: str = ""
    headings: list[str] = Field(default_factory=list)  # h1-h3 texts, in order
    links: list[list[str]] = Field(default_factory=list)  # same-site link paths, by their place (``_place``)
    selects: dict[str, list[str]] = Field(default_factory=dict)  # a select's name (or id) -> its options' texts
    texts: list[str] = Field(default_factory=list)  # short visible texts, in order
    messages: list[str] = Field(default_factory=list)  # texts of alerts and status lines


def _texts(el) -> str:
    return squash(" ".join(t for t in el.itertext()))


def facts_of(step: int, url: str, title: str, raw_html: str) -> PageFacts:
    """The facts of one page from its ``Observation.raw_html``."""
    try:
        root = parse(raw_html)
    except Exception:  # noqa: BLE001 - a page lxml cannot read is a page without facts
        root = None
    facts = PageFacts(step=step, url=url, title=title)
    if root is None:
        return facts
    host = urlsplit(url).netloc
    groups: dict[tuple, list[str]] = {}
    for el in root.iter():
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("h1", "h2", "h3") and (text := _texts(el)):
            facts.headings.append(text[:MAX_TEXT])
        elif tag == "a" and el.get("href") and sum(map(len, groups.values())) < MAX_LINKS and not _in_menu(el):
            target = urlsplit(urljoin(url, el.get("href")))
            group = groups.setdefault(_place(el), [])
            if target.netloc == host and target.path not in group:
                group.append(target.path)
        elif tag == "select" and (key := el.get("name") or el.get("id")):
            facts.selects[key] = [_texts(o) for o in el.iter("option") if _texts(o)]
        if tag and _is_message(el) and (text := _texts(el)) and text[:MAX_TEXT] not in facts.messages:
            facts.messages.append(text[:MAX_TEXT])
        if tag and tag not in _SKIP and len(facts.texts) < MAX_TEXTS:
            own = squash(el.text)
            if 2 <= len(own) <= MAX_TEXT and own not in facts.texts:
                facts.texts.append(own)
        if tag and el.tail is not None and el.getparent() is not None:
            tail = squash(el.tail)
            if 2 <= len(tail) <= MAX_TEXT and tail not in facts.texts and len(facts.texts) < MAX_TEXTS:
                facts.texts.append(tail)
    facts.links = list(groups.values())
    return facts


def _in_menu(el) -> bool:
    """A link of the site's menus (a ``nav``, header or footer, by tag, role or class): its
    siblings are the site's sections (profile, addresses, orders), not records of one kind."""
    for parent in el.iterancestors():
        marks = set(f"{parent.get('class') or ''} {parent.get('role') or ''}".lower().split())
        if parent.tag in _MENU_TAGS or marks & _MENU_MARKS:
            return True
    return False


def _is_message(el) -> bool:
    """An element that tells the outcome of what was done: an alert or a status line by its
    role, or by the class or id pages give such lines ("ok-message", "alert-success", "flash")."""
    if el.get("role") in _MESSAGE_ROLES:
        return True
    marks = f"{el.get('class') or ''} {el.get('id') or ''}".lower()
    return bool(_MESSAGE_MARK.search(marks))


def _place(el) -> tuple:
    """Where a link sits in the page's structure: its and its ancestors' tags and classes, and a
    table cell's column. The links of one list (each record's title in a table, each event of
    a list) share it; a list's rows and items do not count."""
    place = []
    while el is not None and isinstance(el.tag, str):
        column = (
            len([s for s in el.itersiblings(preceding=True) if s.tag in ("td", "th")]) if el.tag in ("td", "th") else 0
        )
        place.append((el.tag, el.get("class") or "", column))
        el = el.getparent()
    return tuple(place)


def write_pages(folder: Path, pages: list[PageFacts], secrets: set[str] | None = None) -> None:
    """``pages`` written to the trace folder, scrubbed of the recording's secrets as its steps are."""
    from webagent.trace.writer import scrub

    lines = (json.dumps(scrub(p.model_dump(), secrets or set()), ensure_ascii=False) + "\n" for p in pages)
    (Path(folder) / FILE).write_text("".join(lines), encoding="utf-8")


def read_pages(folder: Path) -> dict[int, PageFacts]:
    """The pages a recording kept, by step; none for a trace written without them (a run's, or
    one recorded before they were kept)."""
    path = Path(folder) / FILE
    if not path.is_file():
        return {}
    pages = [PageFacts.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {p.step: p for p in pages}
