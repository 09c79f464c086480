"""The rival of bench/gated/snippets.py: the same snippet split over BeautifulSoup(html, "lxml").

Written from the rules in ``webagent/html/snippets.py``'s docstring and the
rendering rules in ``webagent/html/render.py``'s; it imports nothing from
``webagent``, so a shared helper cannot hide a shared bug. Recursive over a
tree of ``RivalNode`` where ours walks a flat token stream.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, NavigableString, Tag

BUDGET = 300

R_ORDER = (
    "role",
    "aria_role",
    "type",
    "alt",
    "aria_description",
    "aria_label",
    "label",
    "title",
    "name",
    "text_value",
    "value",
    "placeholder",
    "input_checked",
    "input_value",
    "option_selected",
)
R_RANK = {name: n for n, name in enumerate(R_ORDER)}
R_SKIP = {"hidden", "none", "presentation", "null", "undefined", ""}
R_WIDGET_TAGS = {"a", "button", "input", "select", "option", "textarea", "label"}
R_WIDGET_ROLES = {
    "button",
    "link",
    "checkbox",
    "radio",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "tab",
    "combobox",
    "textbox",
    "searchbox",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
}


def _rival_attr_text(tag: Tag) -> str:
    kept: list[str] = []
    seen: set[str] = set()
    for name in sorted((k for k in tag.attrs if k in R_RANK), key=R_RANK.__getitem__):
        raw = tag.attrs[name]
        value = (" ".join(raw) if isinstance(raw, list) else raw).strip().lower()
        if value in R_SKIP or value.startswith("http"):
            continue
        words = [w for w in value.split() if len(w) <= 20][:5]
        if words and " ".join(words) not in seen:
            seen.add(" ".join(words))
            kept += words
    return " ".join(kept[:20])


def _attr(tag: Tag, name: str) -> str | None:
    """An attribute's value as one string (bs4 gives multi-valued ones, like class, as a list)."""
    raw = tag.get(name)
    return " ".join(raw) if isinstance(raw, list) else raw


def _rival_widget(tag: Tag) -> bool:
    role, click = _attr(tag, "role"), _attr(tag, "is_clickable")
    return (
        tag.name in R_WIDGET_TAGS
        or (click is not None and click.strip().lower() == "true")
        or (role is not None and role.strip().lower() in R_WIDGET_ROLES)
    )


class RivalNode:
    """One element: its rendered pieces (open token, tails of its children, close token)."""

    __slots__ = ("tag", "bid", "depth", "kids", "open", "tails", "close", "widget", "own_w", "all_w", "deepest")
    # set while the tree is built (_rival_tree) and sized (_rival_sizes)
    open: str
    close: str
    tails: list[str]
    own_w: int
    all_w: int
    deepest: int

    def __init__(self, tag: Tag, depth: int) -> None:
        self.tag, self.bid, self.depth = tag, _attr(tag, "backend_node_id"), depth
        self.kids: list[RivalNode] = []
        self.widget = _rival_widget(tag)


def _collapse(strings: list[str]) -> str:
    return " ".join("".join(strings).split())


def _rival_tree(html: str) -> RivalNode:
    soup = BeautifulSoup(html, "lxml")
    root = soup.find(True)
    assert isinstance(root, Tag), "a page with no element"
    top = RivalNode(root, 0)
    stack = [top]
    while stack:  # build, pre-order; rendering pieces per element
        node = stack.pop()
        head = "<" + node.tag.name + (" id=" + node.bid if node.bid is not None else "")
        meta = _rival_attr_text(node.tag)
        if meta:
            head += " " + meta
        runs: list[list[str]] = [[]]  # text before the first child, then after each child
        for c in node.tag.contents:
            if isinstance(c, Tag):
                node.kids.append(RivalNode(c, node.depth + 1))
                runs.append([])
            elif type(c) is NavigableString:
                runs[-1].append(str(c))
        texts = [_collapse(r) for r in runs]
        if not node.kids:
            if node.tag.name == "text":
                node.open, node.close = texts[0], ""
            elif texts[0]:
                node.open, node.close = head + "> " + texts[0], "</" + node.tag.name + ">"
            else:
                node.open, node.close = head + " />", ""
        else:
            node.open = head + ">" + (" " + texts[0] if texts[0] else "")
            node.close = "</" + node.tag.name + ">"
        node.tails = texts[1:]
        node.own_w = len(node.open.split()) + len(node.close.split()) + sum(len(t.split()) for t in node.tails)
        stack.extend(reversed(node.kids))
    _rival_sizes(top)
    return top


def _rival_sizes(top: RivalNode) -> None:
    order, stack = [], [top]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(n.kids)
    for n in reversed(order):  # children before parents
        n.all_w = n.own_w + sum(k.all_w for k in n.kids)
        n.deepest = max([n.depth] + [k.deepest for k in n.kids])


def _rival_paper_groups(top: RivalNode, depth: int) -> list[list[tuple[str, RivalNode]]]:
    groups: list[list[tuple[str, RivalNode]]] = []
    open_leftover = False

    def visit(n: RivalNode) -> None:
        nonlocal open_leftover
        if n.depth == depth:
            groups.append([("whole", n)])
            open_leftover = False
            return
        if not open_leftover:
            groups.append([])
            open_leftover = True
        groups[-1].append(("shell", n))
        for k in n.kids:
            visit(k)

    visit(top)
    return groups


def _rival_auto_depth(top: RivalNode, budget: int) -> int:
    """Shallowest depth leaving <= 10% of the words in splittable over-budget units."""
    over: dict[int, int] = {}
    stack = [top]
    while stack:
        n = stack.pop()
        if n.widget:  # a widget's descendants are never units of their own
            continue
        if n.kids and n.all_w > budget:
            over[n.depth] = over.get(n.depth, 0) + n.all_w
        stack.extend(n.kids)
    for d in range(1, top.deepest + 1):
        if over.get(d, 0) <= 0.10 * top.all_w:
            return d
    return max(1, top.deepest)


def _rival_budget_groups(top: RivalNode, depth: int, budget: int) -> list[list[tuple[str, RivalNode]]]:
    units: list[tuple[str, RivalNode]] = []

    def cut(n: RivalNode) -> None:
        keep = not n.kids or n.widget
        if not keep and n.depth >= depth:
            keep = n.all_w <= budget or (n.own_w > budget and n.all_w - n.own_w <= budget)
        if keep:
            units.append(("whole", n))
            return
        units.append(("shell", n))
        for k in n.kids:
            cut(k)

    cut(top)
    tiny = max(1, int(budget * 0.25))
    groups: list[list[tuple[str, RivalNode]]] = []
    size = 0
    for kind, n in units:
        w = n.all_w if kind == "whole" else n.own_w
        if groups and size + w <= budget and (size < tiny or w < tiny):
            groups[-1].append((kind, n))
            size += w
        else:
            groups.append([(kind, n)])
            size = w
    return groups


def _rival_render(top: RivalNode, groups) -> list[tuple[list[str], str]]:
    owner: dict[int, int] = {}
    for g, group in enumerate(groups):
        for kind, n in group:
            owner[id(n)] = g
            if kind == "whole":
                stack = list(n.kids)
                while stack:
                    d = stack.pop()
                    owner[id(d)] = g
                    stack.extend(d.kids)
    ids: list[list[str]] = [[] for _ in groups]
    parts: list[list[str]] = [[] for _ in groups]
    # one walk in document order; ("piece", text, group) events via an explicit stack
    events: list = [("enter", top)]
    while events:
        event, x = events.pop()
        if event == "text":
            g, text = x
            if text:
                parts[g].append(text)
            continue
        g = owner[id(x)]
        ids[g].append(x.bid)
        if x.open:
            parts[g].append(x.open)
        later: list = []
        for k, tail in zip(x.kids, x.tails):
            later += [("enter", k), ("text", (g, tail))]
        later.append(("text", (g, x.close)))
        events.extend(reversed(later))
    return [(ids[g], " ".join(parts[g])) for g in range(len(groups))]


def rival_split(html: str, depth: int | str, budget: int = BUDGET) -> list[tuple[list[str], str]]:
    """(ids, text) per snippet, from BeautifulSoup(html, "lxml")."""
    top = _rival_tree(html)
    if depth == "auto":
        groups = _rival_budget_groups(top, _rival_auto_depth(top, budget), budget)
    else:
        groups = _rival_paper_groups(top, int(depth))
    return _rival_render(top, groups)
