"""The modules of runtime/, extensions/ and benchmarks/ import each other without a cycle, counting EVERY import
statement (top level, inside functions, under ``if TYPE_CHECKING:``), and no module imports another's private name.

Because every statement counts, no import inside a function dodges a cycle: hoisting them all would make none. The
ones that remain are lazy for start-up cost, and each module that has some says so once (``LAZY_NOTE``).

The runtime has one direction. Its packages (and top-level modules) sit in ``LAYERS``, from the base up; a module
imports from its own layer or below. An arrow from a package to one in a higher layer is an UPWARD arrow: only those
in ``UPWARD`` remain, each with its reason.

0. base: ``errors``, ``paths``, ``privatedir``, ``pyast``, ``processes`` (processes and threads as /proc shows them), ``frames``
   (the warm server's wire protocol), ``cmdline``, ``rundir``, ``sigint``, ``layout`` (where the template puts
   things), ``enforcement`` (the hooks' rules as data and their generator).
1. ``core``: what one run is made of: limits, the workspace policy, outputs, stubs, the rewrite, hints, settings,
   what a tool is (``core.tool``) and the catalog of built-in tools (``core.catalog``).
2. ``backends`` (the sandboxes), ``mcp`` (MCP servers), ``providers`` (live tools from the editor).
3. ``tools``: the built-in tools, the user's, and the set a run offers (``tools.assemble``, which binds MCP's).
4. ``runner``: the run loop, joining a backend and the assembled tools.
5. ``server`` (the warm server), ``client`` (its thin client, the launcher's entry), ``lifecycle`` (the template's
   life in a repository), ``bootstrap`` (the launcher's slow path), ``codeact`` (the package: ``codeact.run()``).
6. ``cli``: the command line.
7. ``__main__``.
"""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# (folder that is a sys.path entry, folder below it to walk)
TREES = ((ROOT / "runtime", ROOT / "runtime" / "codeact"), (ROOT / "extensions", ROOT / "extensions"),
         (ROOT / "benchmarks", ROOT / "benchmarks"))

LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "errors paths privatedir processes frames cmdline rundir sigint layout enforcement pyast",
    "core",
    "backends mcp providers",
    "tools",
    "runner",
    "server client lifecycle bootstrap codeact",
    "cli",
    "__main__",
))
# (from, to): why this arrow runs up. Every other upward arrow fails test_layers_point_one_way.
UPWARD = {
    ("server", "cli"): "the warm server answers a request by running the same command line as a cold run "
                       "(codeact.cli.main): one parser, one behaviour, warm or cold",
    ("client", "cli"): "the thin client runs the command line in its own process when no server serves it "
                       "(CODEACT_SERVER=0, no AF_UNIX, a server that cannot start)",
}
LAZY_NOTE = "imports inside functions are lazy"  # what a module with some says once, in a comment


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
            name = module_name(base, path)
            if name in found:  # extensions/codeact.py is not the runtime's package: walked under its folder's name
                name = f"{tree.name}/{name}"
            found[name] = (path, path.name == "__init__.py")
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


def layer_key(module: str) -> str:
    """The name ``LAYERS`` places ``module`` by: its package below ``codeact`` (or itself, a top-level module)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_of(key: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if key in layer)


def upward_arrows(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Each runtime package arrow that points to a higher layer, with the module imports that make it."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for module, targets in graph.items():
        if module != "codeact" and not module.startswith("codeact."):
            continue
        for target in targets:
            if target.startswith("codeact.") or target == "codeact":
                source, dest = layer_key(module), layer_key(target)
                if layer_of(dest) > layer_of(source):
                    arrows.setdefault((source, dest), []).append(f"{module} -> {target}")
    return arrows


def lazy_imports(source: str) -> list[int]:
    """The lines of the import statements inside functions."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines += [inner.lineno for inner in ast.walk(node) if isinstance(inner, (ast.Import, ast.ImportFrom))]
    return sorted(set(lines))


def says_lazy(source: str) -> bool:
    return any(line.lstrip().startswith("#") and LAZY_NOTE in line.lower() for line in source.splitlines())


def test_every_runtime_module_has_a_layer() -> None:
    runtime = {layer_key(name) for name in collect_modules() if name == "codeact" or name.startswith("codeact.")}
    placed = set().union(*LAYERS)
    assert runtime - placed == set(), "add these to LAYERS"
    assert placed - runtime == set(), "LAYERS names what is gone"


def test_layers_point_one_way() -> None:
    graph, _ = build_graph()
    arrows = upward_arrows(graph)
    unexplained = {arrow: why for arrow, why in arrows.items() if arrow not in UPWARD}
    assert unexplained == {}, "imports up the layers:\n" + "\n".join(m for ms in unexplained.values() for m in ms)
    assert set(UPWARD) <= set(arrows), "UPWARD lists an arrow the code no longer has: drop it"
    assert len(UPWARD) <= 2


def test_imports_inside_functions_say_why() -> None:
    silent = [str(path.relative_to(ROOT)) for name, (path, _) in collect_modules().items()
              if (name == "codeact" or name.startswith("codeact.")) and lazy_imports(text := path.read_text(encoding="utf-8"))
              and not says_lazy(text)]
    assert silent == [], f"each of these imports inside functions without a comment saying '{LAZY_NOTE}'"


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
    up = upward_arrows({"codeact.core.x": {"codeact.cli.y", "codeact.errors"}, "codeact.cli.y": {"codeact.core.x"}})
    assert up == {("core", "cli"): ["codeact.core.x -> codeact.cli.y"]}
    assert lazy_imports("import os\ndef f():\n    import json\n") == [3]
    assert not says_lazy("def f():\n    import json  # lazy\n") and says_lazy("# Imports inside functions are lazy.\n")


@pytest.mark.parametrize(("name", "level", "module", "is_package", "expected"), [
    ("p.q.m", 1, "x", False, "p.q.x"), ("p.q.m", 2, "x", False, "p.x"), ("p.q", 1, None, True, "p.q"),
    ("p.q", 2, "x", True, "p.x")])
def test_relative_imports_resolve(name: str, level: int, module: str | None, is_package: bool, expected: str) -> None:
    node = ast.ImportFrom(module=module, names=[ast.alias(name="y")], level=level)
    assert _absolute(node, name, is_package) == expected
