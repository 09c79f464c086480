"""The package's shape: no module imports another that imports it back, and no package
imports another that imports it back, directly or round a longer circle (imports at module
level and inside functions alike: an import deferred into a function is still a dependency,
it only runs later); the MiniWoB++ benchmark lives in webagent/miniwob/, not in the live
loop's webagent/agent/."""

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


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of ``graph`` (node -> the nodes it imports): each strongly connected set of
    two or more nodes, sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _described(graph: dict[str, set[str]], why: dict[tuple[str, str], list[str]]) -> list[str]:
    """Each circle of ``graph`` on one line, with the module imports that close it."""
    return [
        " <-> ".join(c) + ": " + "; ".join(sorted(e for a in c for b in c for e in why.get((a, b), [])))
        for c in circles(graph)
    ]


def module_circles(root: Path = ROOT) -> list[str]:
    """Every circle of modules, of any length, each with its imports. A package's __init__ is
    a module too; a module importing its own package (already imported before it) closes none."""
    _, edges = _all_imports(root)
    graph = {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in edges.items()}
    return _described(graph, {(a, b): [f"{a} -> {b}"] for a, targets in graph.items() for b in targets})


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
    return _described(graph, why)


def test_no_module_circle():
    assert module_circles() == []


def test_circles_of_any_length_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}}
    assert circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_module_check_finds_a_circle_of_three(tmp_path):
    """A package whose three modules import round, two of them inside functions."""
    package = tmp_path / "webagent"
    package.mkdir()
    (package / "__init__.py").write_text("from webagent.a import go\n", encoding="utf-8")
    (package / "a.py").write_text("from webagent.b import ready\n\n\ndef go():\n    return ready()\n", encoding="utf-8")
    (package / "b.py").write_text("def ready():\n    from webagent import c\n\n    return c\n", encoding="utf-8")
    (package / "c.py").write_text("def back():\n    import webagent.a\n\n    return webagent.a\n", encoding="utf-8")
    assert module_circles(tmp_path) == [
        "webagent.a <-> webagent.b <-> webagent.c: webagent.a -> webagent.b; webagent.b -> webagent.c; "
        "webagent.c -> webagent.a"
    ]
    (package / "c.py").write_text("def back():\n    import webagent\n", encoding="utf-8")  # its package: no circle
    assert module_circles(tmp_path) == []


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
