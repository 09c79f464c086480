"""A run's folder: ``steps.jsonl`` (one ``StepRecord`` per line, appended as the run goes,
see ``webagent.trace.record``), ``step_NN.png`` (the page before the step's action, the
acted-on element outlined), ``run.json`` (the outcome) and ``report.html``
(``webagent.agent.report``).

Every string written passes through ``scrub``: values typed into password fields are
replaced by ``REDACTED`` from the moment they are known, in the lines already written too (one
shorter than ``SHORT_SECRET`` where it stands alone).
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Collection
from pathlib import Path

from webagent.browser import REDACTED
from webagent.trace.params import map_strings
from webagent.trace.record import FILE, StepRecord, read_steps

OUTLINE = (230, 30, 30)


# A secret shorter than this is replaced only where it stands alone, not inside a longer word
# or number: inside one it tells nothing a guess would not, and replacing it there garbled the
# run (the 1.5B typed "4" as a made-up password: every port, id and answer with a 4 in it read
# "********", in its own history too).
SHORT_SECRET = 4
_ALONE = r"(?<![^\W_]){}(?![^\W_])"  # not beside a letter or digit


def scrub(value, secrets: Collection[str]):
    """``value`` (JSON-like) with every secret replaced by REDACTED (the longest first; a
    short one where it stands alone, ``SHORT_SECRET``)."""
    ordered = sorted((s for s in secrets if s), key=len, reverse=True)
    if not ordered:
        return value
    pattern = re.compile(
        "|".join(re.escape(s) if len(s) >= SHORT_SECRET else _ALONE.format(re.escape(s)) for s in ordered)
    )
    return map_strings(value, lambda text: pattern.sub(REDACTED, text))


def outline_png(png: bytes, box: tuple[float, float, float, float] | None) -> bytes:
    """The screenshot with a rectangle around ``box`` (page CSS pixels)."""
    if box is None:
        return png
    from PIL import Image, ImageDraw

    image = Image.open(io.BytesIO(png)).convert("RGB")
    x, y, w, h = box
    draw = ImageDraw.Draw(image)
    for grow in range(3):  # 3 px, outside the element so its own pixels stay visible
        draw.rectangle([x - 2 - grow, y - 2 - grow, x + w + 1 + grow, y + h + 1 + grow], outline=OUTLINE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


async def screenshot(browser, times: dict[str, float]) -> bytes | None:
    """The page before a step's action, for ``TraceWriter.write_step`` (None when it cannot be
    taken); the seconds it took go to ``times``."""
    t0 = time.perf_counter()
    try:
        return await browser.page.screenshot(full_page=True, timeout=5000)
    except Exception:  # noqa: BLE001 - a step without a picture is still a step
        return None
    finally:
        times["screenshot_s"] = time.perf_counter() - t0


class TraceWriter:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.steps_path = self.folder / FILE
        self.steps_path.write_text("")
        self.secrets: set[str] = set()
        self._scrubbed_for = 0  # how many secrets the lines on disk were scrubbed for

    def _rescrub(self) -> None:
        """A secret learnt at this step may sit in an earlier step's line (a prompt or reply
        that quoted the task): scrub the lines already written."""
        if len(self.secrets) == self._scrubbed_for:
            return
        self._scrubbed_for = len(self.secrets)
        lines = [json.dumps(scrub(r.to_json(), self.secrets), ensure_ascii=False) + "\n" for r in self.steps()]
        tmp = self.steps_path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(lines), encoding="utf-8")
        tmp.replace(self.steps_path)

    def write_step(
        self, record: StepRecord, screenshot: bytes | None = None, box: tuple[float, float, float, float] | None = None
    ) -> StepRecord:
        """Append ``record`` (scrubbed of every secret known by now, with its screenshot's
        name); the record as written."""
        self._rescrub()
        data = scrub(record.to_json(), self.secrets)
        if screenshot is not None:
            name = f"step_{record.step:02d}.png"
            (self.folder / name).write_bytes(outline_png(screenshot, box))
            data["screenshot"] = name
        with self.steps_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(data, ensure_ascii=False) + "\n")
        return StepRecord.model_validate(data)

    def write_run(self, summary: dict) -> None:
        self._rescrub()
        (self.folder / "run.json").write_text(json.dumps(scrub(summary, self.secrets), indent=2, ensure_ascii=False))

    def steps(self) -> list[StepRecord]:
        return read_steps(self.steps_path)
