"""Shared vocabulary of the HTML package: which tags and attributes matter.

Mind2Web's cleaned HTML keeps a small attribute set (browser-derived state is
written with underscores: ``aria_label``, ``input_value``, ``option_selected``)
and every element carries a ``backend_node_id``. These tables are the single
place that knows that layout.
"""

from __future__ import annotations

import re

ID_ATTR = "backend_node_id"

#: Elements dropped with their whole subtree, wherever they are.
DROP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "meta", "link", "base"})

#: A line break before and after these (the agent view's lines, a document's paragraphs):
#: everything else flows inline.
BLOCK_TAGS = frozenset(
    """address article aside blockquote body dd details dialog div dl dt fieldset figcaption figure
    footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol p pre section summary table tbody
    td th thead tr ul br iframe caption legend label""".split()
)

#: HTML void elements: they never have content and serialise self-closed.
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)

#: Mind2Web's kept attributes (besides every ``aria_*`` and ``input_*``).
KEEP_ATTRS = frozenset(
    {
        "alt",
        "role",
        "name",
        "type",
        "value",
        "placeholder",
        "title",
        "label",
        "class",
        "id",
        "text_value",
        "option_selected",
        ID_ATTR,
        "bounding_box_rect",
        "is_clickable",
    }
)

#: Kept as well in a live page's cleaning (the agent view reads labels' targets, editable
#: elements, disabled and required controls from them); Mind2Web's own layout does not have them.
LIVE_ATTRS = frozenset({"for", "contenteditable", "disabled", "required", "readonly", "ax_role", "ax_name"})

#: aria attributes whose values are element-id references: noise for a model.
ARIA_IDREF = frozenset(
    {
        "aria_controls",
        "aria_describedby",
        "aria_labelledby",
        "aria_owns",
        "aria_activedescendant",
        "aria_flowto",
        "aria_details",
        "aria_errormessage",
    }
)

#: Attributes rendered as words after ``id=N``, in this order (MindAct's order).
RENDER_ATTRS: dict[str, int] = {
    name: rank
    for rank, name in enumerate(
        (
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
    )
}

#: Attribute values that say nothing (skipped in rendering, as MindAct does).
EMPTY_VALUES = frozenset({"hidden", "none", "presentation", "null", "undefined", ""})

#: An element is interactive (a potential action target that must never be cut
#: from its own subtree) if its tag is one of these ...
INTERACTIVE_TAGS = frozenset({"a", "button", "input", "select", "option", "textarea", "label"})
#: ... or its ARIA role is one of these widget roles ...
INTERACTIVE_ROLES = frozenset(
    {
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
)
#: ... or it carries ``is_clickable="true"``.

_XML_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def valid_xml_name(name: str) -> bool:
    """Whether ``name`` is usable as an XML element or attribute name without a namespace."""
    return bool(_XML_NAME.match(name))


def is_interactive(tag: str, role: str | None, clickable: str | None) -> bool:
    """The interactivity rule used by cleaning and by snippet cutting."""
    if tag in INTERACTIVE_TAGS:
        return True
    if clickable is not None and clickable.strip().lower() == "true":
        return True
    return role is not None and role.strip().lower() in INTERACTIVE_ROLES
