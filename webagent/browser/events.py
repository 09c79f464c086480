"""Browser events as lines the model and the trace read: JS dialogs, downloads, a crashed
page. The session keeps every line in ``BrowserSession.events``; each action's
``ActionResult.note`` carries the lines of its own time, and those that came between
actions (a timer's alert, a tab a timer opened) under "before this action:" in the next
action's note (see ``actions.execute``).

* Dialogs never wait: ``alert`` is acknowledged; ``confirm``, ``prompt`` and
  ``beforeunload`` are dismissed unless the session has ``accept_dialogs=True`` (a
  prompt is then answered with its default text).
* A download is saved under the session's ``downloads_dir`` (a run passes its trace
  folder's ``downloads/``), never over an earlier file (``name-1.ext``); without a
  folder it is cancelled. Saving runs in a task of the session: nothing blocks.
"""

from __future__ import annotations

import re
from pathlib import Path

_ANSWER = {
    ("confirm", True): "accepted (answered OK)",
    ("confirm", False): "dismissed (answered Cancel)",
    ("prompt", False): "dismissed (answered Cancel)",
    ("beforeunload", True): "accepted (the page may be left)",
    ("beforeunload", False): "dismissed (the page stays)",
}


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def answer_dialog(session, dialog) -> None:
    kind = dialog.type
    accept = kind == "alert" or session.accept_dialogs
    if kind == "alert":
        outcome = "acknowledged"
    elif kind == "prompt" and accept:
        outcome = f"accepted with {dialog.default_value!r}"
    else:
        outcome = _ANSWER.get((kind, accept), "accepted" if accept else "dismissed")
    try:
        if accept and kind == "prompt":
            await dialog.accept(dialog.default_value)
        elif accept:
            await dialog.accept()
        else:
            await dialog.dismiss()
    except Exception:  # noqa: BLE001 - the page may be gone already
        outcome = "gone before it was answered"
    message = _one_line(dialog.message)
    session.events.append(f"dialog {kind}" + (f" {message!r}" if message else "") + f" {outcome}")


def on_download(session, download) -> None:
    name = _safe_name(download.suggested_filename)
    session.events.append(f"download started: {name}")
    session._spawn(_save(session, download, name), download=True)


async def _save(session, download, name: str) -> None:
    folder = session.downloads_dir
    if folder is None:
        session.events.append(f"download of {name} cancelled (this session keeps no downloads)")
        try:
            await download.cancel()
        except Exception:  # noqa: BLE001
            pass
        return
    try:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = _unique(folder, name)
        path.touch()  # claim the name: two downloads at once get two names
        await download.save_as(path)
        session.events.append(f"download saved: {path} ({path.stat().st_size} bytes)")
    except Exception as exc:  # noqa: BLE001 - a failed download is a line, not a crash
        failure = str(exc).strip().splitlines()
        session.events.append(f"download of {name} failed: {_one_line(failure[0] if failure else type(exc).__name__)}")


def _safe_name(suggested: str) -> str:
    name = re.sub(r"[\x00-\x1f/\\:]", "_", Path(suggested or "").name).strip(" .")
    return name[:150] or "download"


def _unique(folder: Path, name: str) -> Path:
    path = folder / name
    stem, suffix = Path(name).stem, Path(name).suffix
    n = 1
    while path.exists():
        path = folder / f"{stem}-{n}{suffix}"
        n += 1
    return path


def on_crash(session, page) -> None:
    session.events.append(f"the page crashed: {page.url} (GOTO or BACK loads a page again)")
