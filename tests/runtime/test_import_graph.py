"""The modules of runtime/, extensions/ and benchmarks/ import each other without a cycle, counting EVERY import
statement (top level, inside functions, under ``if TYPE_CHECKING:``), and no module imports another's private name."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# (folder that is a sys.path entry, folder below it to walk)
TREES = ((ROOT / "runtime", ROOT / "runtime" / "codeact"), (ROOT / "extensions", ROOT / "extensions"),
         (ROOT / "benchmarks", ROOT / "benchmarks"))


def module_name(base: Path, path: Path) -> str:
    """The dotted name of ``path`` below the sys.path entry ``base`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def collect_modules() -> dict[str, tuple[Path, bool]]:
    """Every module walked: name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for base, tree in TREES:
        for path in sorted(tree.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            found[module_name(base, path)] = (path, path.name == "__init__.py")
    return found


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if is_package else name.split(".")[:-1]
    anchor = package[:len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join([*anchor, *([node.module] if node.module else [])])


def imports_of(name: str, source: str, is_package: bool, known: set[str]) -> tuple[set[str], list[str]]:
    """The walked modules that ``name`` imports (every statement), and the private names it imports from them."""
    edges: set[str] = set()
    private: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target:
                    edges.add(target)
        elif isinstance(node, ast.ImportFrom):
            pkg = _absolute(node, name, is_package)
            for alias in node.names:
                full = f"{pkg}.{alias.name}" if pkg else alias.name
                if full in known:
                    edges.add(full)
                elif pkg in known:
                    edges.add(pkg)
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{name}: from {pkg} import {alias.name}")
    edges.discard(name)
    return edges, private


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def build_graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = collect_modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    private: list[str] = []
    for name, (path, is_package) in modules.items():
        graph[name], found = imports_of(name, path.read_text(encoding="utf-8"), is_package, known)
        private += found
    return graph, private


def test_the_walk_sees_the_layout() -> None:
    graph, _ = build_graph()
    for name in ("codeact.runner", "codeact.backends.probe", "codeact.tools.assemble", "codeact.cli",
                 "codeact.layout", "codeact.mcp.discovery", "codeact"):
        assert name in graph
    assert "codeact.core.limits" in graph["codeact.runner"]


def test_no_import_cycle() -> None:
    graph, _ = build_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_private_name_imported_across_modules() -> None:
    _, private = build_graph()
    assert private == [], "\n".join(private)


def test_the_checks_can_fail() -> None:
    known = {"p", "p.a", "p.b"}
    a, private = imports_of("p.a", "def f():\n    from . import b\n    from .b import _x\n", False, known)
    assert a == {"p.b"} and private == ["p.a: from p.b import _x"]
    b, _ = imports_of("p.b", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import p.a\n", False, known)
    assert b == {"p.a"}
    cycle = find_cycle({"p.a": a, "p.b": b, "p": set()})
    assert cycle is not None and set(cycle) == {"p.a", "p.b"}
    assert find_cycle({"p.a": {"p.b"}, "p.b": set()}) is None


@pytest.mark.parametrize(("name", "level", "module", "is_package", "expected"), [
    ("p.q.m", 1, "x", False, "p.q.x"), ("p.q.m", 2, "x", False, "p.x"), ("p.q", 1, None, True, "p.q"),
    ("p.q", 2, "x", True, "p.x")])
def test_relative_imports_resolve(name: str, level: int, module: str | None, is_package: bool, expected: str) -> None:
    node = ast.ImportFrom(module=module, names=[ast.alias(name="y")], level=level)
    assert _absolute(node, name, is_package) == expected
