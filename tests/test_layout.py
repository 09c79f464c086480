"""The package's shape: no two modules import each other (at module level or inside a
function), and the MiniWoB++ benchmark lives in webagent/miniwob/, not in the live loop's
webagent/agent/."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _imports() -> dict[str, set[str]]:
    files = {}
    for package in ("webagent", "mind2web"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    edges = {}
    for name, path in files.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        # a package's __init__ re-exports its modules: not a circle
        edges[name] = {
            t
            for t in found
            if t in files and t != name and not name.startswith(t + ".") and files[t].name != "__init__.py"
        }
    return edges


def test_no_two_modules_import_each_other():
    edges = _imports()
    circles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if a in edges[b]})
    assert circles == []


def test_miniwob_lives_in_its_own_package():
    agent = {p.name for p in (ROOT / "webagent" / "agent").glob("*.py")}
    assert not {name for name in agent if "miniwob" in name or name == "scripted.py"}
    miniwob = {p.name for p in (ROOT / "webagent" / "miniwob").glob("*.py")}
    assert {"env.py", "runner.py", "browser.py", "report.py", "scripted.py", "cli.py"} <= miniwob
