"""Browser events as lines the model and the trace read: JS dialogs, downloads, a crashed
page. The session keeps every line in ``BrowserSession.events``; each action's
``ActionResult.note`` carries the lines of its own time, and those that came between
actions (a timer's alert, a tab a timer opened) under "before this action:" in the next
action's note (see ``actions.execute``).

* Dialogs never hang a step: a ``confirm`` or ``prompt`` raised by an action is held open
  for the caller to answer (``dialogs``); every other one is answered at once: ``alert``
  is acknowledged; ``confirm``, ``prompt`` and ``beforeunload`` are dismissed unless the
  session has ``accept_dialogs=True`` (then accepted, a prompt with its default text, and
  never held).
* A download is saved under the session's ``downloads_dir`` (a run passes its trace
  folder's ``downloads/``), never over an earlier file (``name-1.ext``); without a
  folder it is cancelled. Saving runs in a task of the session: nothing blocks.
"""

from __future__ import annotations

import re
from pathlib import Path

from webagent.browser.dialogs import hold, one_line, record_answer, respond
from webagent.errors import first_line


async def answer_dialog(session, dialog) -> None:
    if hold(session, dialog):  # the caller answers it (``dialogs``)
        return
    kind = dialog.type
    accept = kind == "alert" or session.accept_dialogs
    gone = await respond(dialog, accept, dialog.default_value if kind == "prompt" else None)
    record_answer(session, dialog, accept, gone)


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
        folder.mkdir(parents=True, exist_ok=True)
        path = _unique(folder, name)
        path.touch()  # claim the name: two downloads at once get two names
        await download.save_as(path)
        session.events.append(f"download saved: {path} ({path.stat().st_size} bytes)")
    except Exception as exc:  # noqa: BLE001 - a failed download is a line, not a crash
        session.events.append(f"download of {name} failed: {one_line(first_line(exc))}")


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
