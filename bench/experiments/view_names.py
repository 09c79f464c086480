"""Controls offered and the names they are offered under, before and after a change to the
agent's view: every HTML page under tests/fixtures/ and the demo shop's pages captured live
in Chromium, and every step page of the shipped Mind2Web data (offline cleaned HTML, which
carries no accessibility tree).

    # what the code at a commit shows (this script, run against an older checkout's webagent):
    git worktree add /tmp/before COMMIT
    .venv/bin/python -m bench.experiments.view_names --code /tmp/before --dump before.json
    .venv/bin/python -m bench.experiments.view_names --dump after.json --before before.json --out DIR

``--code DIR`` runs the dump in a child process started in DIR, so DIR's ``webagent`` is the
one imported (Python puts the working folder first on the path for ``-m``), with this
checkout on ``PYTHONPATH`` for the script itself.

``--before`` compares: per source, controls offered before and after, names changed (count,
and a sample with both names), controls gained and lost; written as ``DIR/view_names.json``
and ``DIR/view_names.md``. A control is matched by its place among its page's controls (the
ids, Chromium's backend node ids, differ between two browsers' loads of a page).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.lib import ROOT

SAMPLE = 60


def _controls(cleaned_html: str) -> dict[str, list]:
    from webagent.web.agent_view import build_view

    view = build_view(cleaned_html)
    return {i: [c.kind, c.name, list(c.options)] for i, c in view.controls.items()}


async def _live_pages() -> dict[str, dict]:
    from webagent.browser import BrowserSession
    from webagent.demo_site import serve_directory

    folders = [ROOT / "tests" / "fixtures", ROOT / "webagent" / "demo_site" / "site"]
    out: dict[str, dict] = {}
    async with BrowserSession(allowed_domains=["127.0.0.1"]) as browser:
        for folder in folders:
            base, stop = serve_directory(folder)
            try:
                for path in sorted(folder.rglob("*.html")):
                    rel = path.relative_to(folder).as_posix()
                    browser.guard = None
                    opened = await browser.open(f"{base}{rel}")
                    if not opened.ok:
                        continue
                    try:
                        obs = await browser.observe()
                    except Exception:  # noqa: BLE001 - a page that cannot be captured is left out of both sides
                        continue
                    out[f"{folder.name}/{rel}"] = _controls(obs.cleaned_html)
            finally:
                stop()
    return out


def _mind2web_pages() -> dict[str, dict]:
    from mind2web.data import iter_steps, load_tasks

    out = {}
    data = ROOT / "tests" / "fixtures" / "mind2web"
    for split in ("test_task", "test_website", "test_domain"):
        for step in iter_steps(load_tasks(str(data), split=split)):
            out[f"{split}/{step.annotation_id}/{step.index}"] = _controls(step.action.cleaned_html)
    return out


def _pairs(before: dict, after: dict):
    """Controls of one page paired in page order (ids differ between two browsers' loads of a
    page, so a control is matched by its place among the page's controls, kinds aligned by
    ``difflib``): (pairs, gained, lost), each an id with its [kind, name, options]."""
    b, a = list(before.items()), list(after.items())
    matcher = difflib.SequenceMatcher(a=[v[0] for _, v in b], b=[v[0] for _, v in a], autojunk=False)
    pairs, gained, lost = [], [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += list(zip(b[i1:i2], a[j1:j2]))
        else:
            lost += b[i1:i2]
            gained += a[j1:j2]
    return pairs, gained, lost


def compare(before: dict, after: dict) -> dict:
    """Per source: pages, controls before/after, names changed with a sample, gained, lost."""
    result = {}
    for source in ("live", "mind2web"):
        b, a = before[source], after[source]
        pages = sorted(set(b) & set(a))
        changed, gained, lost = [], [], []
        n_before = n_after = 0
        for page in pages:
            n_before += len(b[page])
            n_after += len(a[page])
            pairs, plus, minus = _pairs(b[page], a[page])
            for (_, old), (i, new) in pairs:
                if old[1] != new[1] or old[2] != new[2]:
                    changed.append(
                        {"page": page, "id": i, "kind": new[0], "before": old[1], "after": new[1]}
                        | ({"options_before": old[2], "options_after": new[2]} if old[2] != new[2] else {})
                    )
            gained += [{"page": page, "id": i, "kind": v[0], "name": v[1]} for i, v in plus]
            lost += [{"page": page, "id": i, "kind": v[0], "name": v[1]} for i, v in minus]
        result[source] = {
            "pages": len(pages),
            "controls_before": n_before,
            "controls_after": n_after,
            "names_changed": len(changed),
            "gained": len(gained),
            "lost": len(lost),
            "changed": changed,
            "gained_list": gained,
            "lost_list": lost,
        }
    return result


def markdown(result: dict) -> str:
    lines = [
        "| pages | count | controls before | controls after | names or options changed | gained | lost |",
        "|---|---|---|---|---|---|---|",
    ]
    for source, r in result.items():
        lines.append(
            f"| {source} | {r['pages']} | {r['controls_before']} | {r['controls_after']} | {r['names_changed']} "
            f"| {r['gained']} | {r['lost']} |"
        )
    for source, r in result.items():
        if r["changed"]:
            lines += ["", f"Names changed ({source}, {min(SAMPLE, len(r['changed']))} of {len(r['changed'])}):", ""]
            lines += [
                f"- {c['page']} [{c['id']}] {c['kind']}: {c['before']!r} -> {c['after']!r}"
                + (f" (options {c['options_before']} -> {c['options_after']})" if "options_after" in c else "")
                for c in r["changed"][:SAMPLE]
            ]
        for key, word in (("gained_list", "gained"), ("lost_list", "lost")):
            if r[key]:
                lines += ["", f"Controls {word} ({source}, {min(SAMPLE, len(r[key]))} of {len(r[key])}):", ""]
                lines += [f"- {c['page']} [{c['id']}] {c['kind']} {c['name']!r}" for c in r[key][:SAMPLE]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", required=True, help="write this code's controls and names here")
    parser.add_argument("--before", help="a dump of the code before the change, to compare with")
    parser.add_argument("--out", help="folder for view_names.json and view_names.md (with --before)")
    parser.add_argument("--code", type=Path, help="dump with the webagent of this checkout instead (a worktree)")
    args = parser.parse_args(argv)
    if args.code:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        dump = str(Path(args.dump).resolve())
        cmd = [sys.executable, "-m", "bench.experiments.view_names", "--dump", dump]
        return subprocess.run(cmd, cwd=args.code, env=env).returncode
    now = {"live": asyncio.run(_live_pages()), "mind2web": _mind2web_pages()}
    Path(args.dump).write_text(json.dumps(now, ensure_ascii=False))
    print(f"{len(now['live'])} live pages, {len(now['mind2web'])} Mind2Web step pages -> {args.dump}")
    if args.before:
        result = compare(json.loads(Path(args.before).read_text()), now)
        text = markdown(result)
        print(text)
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "view_names.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
            (out / "view_names.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
