"""A seeded random page in Mind2Web's cleaned layout, for bench/gated/snippets.py.

Not built from the fixtures: random nesting depths (wrapper chains, lists,
tables, forms with inputs/selects/textareas/buttons, fieldsets, definition
lists), links, Mind2Web ``<text>`` nodes, random attributes (rendered ones,
noise, URLs, upper case, escaped entities) and random text lengths (Pareto).
Every element has a ``backend_node_id``. The markup is valid XML and valid HTML
(non-void elements closed explicitly, block content never inside ``<p>``, no
nested links or forms), so an XML and an HTML parser read the same tree.
"""

from __future__ import annotations

import html as htmllib
import random

SEED = 20240613


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = [
        "ka",
        "lo",
        "mi",
        "tra",
        "ven",
        "so",
        "pel",
        "dor",
        "qui",
        "an",
        "est",
        "ru",
        "flo",
        "ber",
        "zin",
        "ga",
        "te",
        "mon",
        "shi",
        "ap",
    ]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(3000)}
    words |= {"&", "<b>", "a>b", "Zürich", "東京", "CAFÉ", "$129.00", "10:45", "'quoted'", '"x"'}
    return sorted(words)


class PageGenerator:
    """A seeded random page in Mind2Web's cleaned layout, as one string."""

    BLOCKS = ("div", "section", "article", "nav", "aside", "header", "footer", "main")
    MAX_DEPTH = 40

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.next_id = 1
        self.out: list[str] = []
        self.size = 0

    def emit(self, s: str) -> None:
        self.out.append(s)
        self.size += len(s)

    def text(self, lo: int, hi: int) -> str:
        n = min(hi, int(self.rng.paretovariate(1.3)) + lo - 1)
        words = [self.rng.choice(self.words) for _ in range(n)]
        sep = "  " if self.rng.random() < 0.1 else " "
        return htmllib.escape(sep.join(words), quote=False)

    def open(self, tag: str, kind: str = "", void: bool = False) -> str:
        rng = self.rng
        attrs = [("backend_node_id", str(self.next_id))]
        self.next_id += 1
        pool = [
            ("class", lambda: " ".join(rng.choice(self.words) for _ in range(rng.randint(1, 3)))),
            ("bounding_box_rect", lambda: ",".join(str(rng.randint(0, 900)) for _ in range(4))),
            ("aria_label", lambda: self.text(1, 9)),
            ("title", lambda: rng.choice([self.text(1, 6), "https://example.com/" + rng.choice(self.words)])),
            ("role", lambda: rng.choice(["button", "link", "navigation", "presentation", "tab", "region"])),
            ("id", lambda: "x" + rng.choice(self.words)),
            ("is_clickable", lambda: rng.choice(["true", "false"])),
            ("aria_description", lambda: self.text(1, 4)),
            ("label", lambda: self.text(1, 3).upper()),
        ]
        for name, value in rng.sample(pool, rng.choice([0, 0, 1, 1, 2, 3])):
            attrs.append((name, value()))
        if kind == "input":
            attrs += [
                ("type", rng.choice(["text", "checkbox", "radio", "submit", "hidden", "email"])),
                ("name", rng.choice(self.words)),
            ]
            if rng.random() < 0.5:
                attrs.append(("placeholder", self.text(1, 4)))
            if rng.random() < 0.3:
                attrs.append(("input_value", self.text(1, 3)))
            if rng.random() < 0.2:
                attrs.append(("value", rng.choice(["none", "", self.text(1, 2)])))
        elif kind == "option":
            attrs.append(("value", rng.choice(self.words)))
            if rng.random() < 0.1:
                attrs.append(("option_selected", "true"))
        elif kind == "img":
            attrs.append(("alt", self.text(0, 6)))
        rng.shuffle(attrs)
        body = " ".join(f'{k}="{htmllib.escape(v, quote=True)}"' for k, v in attrs)
        return f"<{tag} {body}/>" if void else f"<{tag} {body}>"

    # inline content: text, spans, links, buttons, labels, inputs, images, <text> nodes
    def inline(self, depth: int, in_link: bool = False) -> None:
        rng = self.rng
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            if r < 0.35 or depth >= self.MAX_DEPTH:
                self.emit(self.text(1, 40))
            elif r < 0.5:
                tag = rng.choice(["span", "b", "em", "strong"])
                self.emit(self.open(tag))
                if rng.random() < 0.3:
                    self.inline(depth + 1, in_link)
                elif rng.random() < 0.9:
                    self.emit(self.text(1, 12))
                self.emit(f"</{tag}>")
            elif r < 0.6:
                self.emit(self.open("text") + self.text(1, 15) + "</text>")
            elif r < 0.72 and not in_link:
                self.emit(self.open("a"))
                if rng.random() < 0.3:
                    self.inline(depth + 1, True)
                else:
                    self.emit(self.text(1, 8))
                self.emit("</a>")
            elif r < 0.8 and not in_link:
                self.emit(self.open("button") + self.text(1, 4) + "</button>")
            elif r < 0.87:
                self.emit(self.open("img", "img", void=True))
            elif r < 0.92:
                self.emit(self.open("br", void=True))
            elif not in_link:
                self.emit(self.open("label") + self.text(1, 5) + self.open("input", "input", void=True) + "</label>")

    def form(self, depth: int) -> None:
        rng = self.rng
        self.emit(self.open("form"))
        for _ in range(rng.randint(1, 8)):
            r = rng.random()
            if r < 0.3:
                self.emit(self.open("label") + self.text(1, 4) + "</label>")
                self.emit(self.open("input", "input", void=True))
            elif r < 0.5:
                self.emit(self.open("select"))
                for _ in range(rng.randint(1, 40)):
                    self.emit(self.open("option", "option") + self.text(1, 5) + "</option>")
                self.emit("</select>")
            elif r < 0.6:
                word = rng.choice([w for w in self.words[:50] if w.isalpha()])
                self.emit(self.open("textarea") + word + "</textarea>")
            elif r < 0.75:
                self.emit(self.open("button") + self.text(1, 3) + "</button>")
            else:
                self.emit(self.open("fieldset") + self.open("legend") + self.text(1, 4) + "</legend>")
                self.block(depth + 2, in_form=True)
                self.emit("</fieldset>")
        self.emit("</form>")

    def block(self, depth: int, in_form: bool = False) -> None:
        rng = self.rng
        r = rng.random()
        if depth >= self.MAX_DEPTH or r < 0.2:
            tag = rng.choice(["p", "p", "h1", "h2", "h3", "h4"])
            self.emit(self.open(tag))
            self.inline(depth + 1)
            self.emit(f"</{tag}>")
        elif r < 0.45:  # a container with a few blocks and some loose text
            tag = rng.choice(self.BLOCKS)
            self.emit(self.open(tag))
            if rng.random() < 0.1:
                self.emit(f"</{tag}>")  # an empty one
                return
            # fewer children deeper down, so pages are wide, not one giant subtree
            width = [1, 1, 2, 2, 3, 4, 6] if depth < 6 else [1, 1, 1, 2]
            for _ in range(rng.choice(width)):
                if rng.random() < 0.25:
                    self.emit(self.text(1, 20))
                self.block(depth + 1, in_form)
            if rng.random() < 0.2:
                self.emit(self.text(1, 10))
            self.emit(f"</{tag}>")
        elif r < 0.6:  # a chain of wrappers: sudden depth
            k = rng.randint(1, 12)
            for _ in range(k):
                self.emit(self.open("div"))
            self.block(depth + k, in_form)
            self.emit("</div>" * k)
        elif r < 0.72:
            tag = rng.choice(["ul", "ol"])
            self.emit(self.open(tag))
            for _ in range(rng.randint(1, 12)):
                self.emit(self.open("li"))
                if rng.random() < (0.3 if depth < 6 else 0.15):
                    self.block(depth + 2, in_form)
                else:
                    self.inline(depth + 2)
                self.emit("</li>")
            self.emit(f"</{tag}>")
        elif r < 0.82:
            self.emit(self.open("table") + self.open("tbody"))
            cols = rng.randint(1, 5)
            for _ in range(rng.randint(1, 8)):
                self.emit(self.open("tr"))
                for _ in range(cols):
                    self.emit(self.open("td"))
                    if rng.random() < (0.2 if depth < 6 else 0.1):
                        self.block(depth + 4, in_form)
                    else:
                        self.inline(depth + 4)
                    self.emit("</td>")
                self.emit("</tr>")
            self.emit("</tbody></table>")
        elif r < 0.9 and not in_form:
            self.form(depth + 1)
        else:
            self.emit(self.open("dl"))
            for _ in range(rng.randint(1, 4)):
                self.emit(self.open("dt") + self.text(1, 4) + "</dt>")
                self.emit(self.open("dd"))
                self.inline(depth + 2)
                self.emit("</dd>")
            self.emit("</dl>")

    def page(self, target_bytes: int) -> str:
        self.emit(self.open("html") + self.open("body"))
        while self.size < target_bytes:
            self.block(2)
            if self.rng.random() < 0.1:
                self.emit(self.text(1, 10))
        self.emit("</body></html>")
        return "".join(self.out)


def generate_page(target_bytes: int, seed: int = SEED) -> str:
    """A page of about ``target_bytes`` characters; the same for the same seed."""
    return PageGenerator(seed).page(target_bytes)
