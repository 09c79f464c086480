"""The package's shape: no two modules import each other, and no package imports another
that imports it back, directly or round a longer circle (imports at module level and inside
functions alike: an import deferred into a function is still a dependency, it only runs
later); the MiniWoB++ benchmark lives in webagent/miniwob/, not in the live loop's
webagent/agent/."""

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _files(root: Path = ROOT) -> dict[str, Path]:
    files = {}
    for package in ("webagent", "mind2web"):
        for path in (root / package).rglob("*.py"):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    return files


def _all_imports(root: Path = ROOT) -> tuple[dict[str, Path], dict[str, set[str]]]:
    """Each module of ours and the modules of ours it imports (a package's __init__ included)."""
    files = _files(root)
    edges = {}
    for name, path in files.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        edges[name] = {t for t in found if t in files and t != name}
    return files, edges


def _imports() -> dict[str, set[str]]:
    files, edges = _all_imports()
    # a package's __init__ re-exports its modules: not a circle
    return {
        name: {t for t in targets if not name.startswith(t + ".") and files[t].name != "__init__.py"}
        for name, targets in edges.items()
    }


def package_of(module: str) -> str:
    """``webagent.agent`` for ``webagent.agent.loop``; a module directly under the top package
    (``webagent.api``, ``mind2web.data``) is its own, and the top package's __init__ is ``webagent``."""
    return ".".join(module.split(".")[:2])


def package_circles(root: Path = ROOT) -> list[str]:
    """Every circle of packages (a strongly connected set of two or more), each with the module
    imports that close it. An import of a package's __init__ is an import of that package."""
    _, edges = _all_imports(root)
    graph: dict[str, set[str]] = {}
    why: dict[tuple[str, str], list[str]] = {}
    for module, targets in edges.items():
        for target in targets:
            a, b = package_of(module), package_of(target)
            if a != b:
                graph.setdefault(a, set()).add(b)
                why.setdefault((a, b), []).append(f"{module} -> {target}")
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [
        " <-> ".join(c)
        + ": "
        + "; ".join(sorted(e for a in c for b in c if (a, b) in why for e in sorted(why[(a, b)])))
        for c in circles
    ]


def test_no_two_modules_import_each_other():
    edges = _imports()
    circles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if a in edges[b]})
    assert circles == []


def test_no_package_imports_another_that_imports_it_back():
    assert package_circles() == []


def test_the_package_check_finds_a_circle(tmp_path):
    """A copy of the sources where the agent imports replay back (replay imports the agent)."""
    for path in _files().values():
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    loop = tmp_path / "webagent" / "agent" / "loop.py"
    loop.write_text(loop.read_text(encoding="utf-8") + "\n\ndef _back():\n    from webagent.replay import store\n")
    found = package_circles(tmp_path)
    assert len(found) == 1 and found[0].startswith("webagent.agent <-> webagent.replay: ")
    assert "webagent.agent.loop -> webagent.replay.store" in found[0]


def test_miniwob_lives_in_its_own_package():
    agent = {p.name for p in (ROOT / "webagent" / "agent").glob("*.py")}
    assert not {name for name in agent if "miniwob" in name or name == "scripted.py"}
    miniwob = {p.name for p in (ROOT / "webagent" / "miniwob").glob("*.py")}
    assert {"env.py", "runner.py", "browser.py", "report.py", "scripted.py", "cli.py"} <= miniwob
