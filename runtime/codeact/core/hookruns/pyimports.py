"""What a Python start imports from the folders first on its ``sys.path``: the files a hook's Python command runs
besides the script it names (issue 40). Python puts the script's folder (or, for ``-c``, ``-m`` and a program read
from stdin, the folder it runs in) and ``PYTHONPATH``'s before the standard library, so a ``json.py`` created there
runs when the script imports ``json``."""
from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from typing import NamedTuple

# What Python imports from a folder of sys.path: its modules and their cached bytecode, extension modules, and
# its packages' __init__. A new one of any name is refused; an existing one only where its name is the standard
# library's (it shadows what any start imports) or one the start is followed to import (SURFACE_NAMES).
SURFACE = ("*.py", "*.pyc", "*.so", "*.pyd", "__pycache__/*", "*/__init__.*", "*/__pycache__/__init__.*")
STDLIB = frozenset(name.lower() for name in (*sys.stdlib_module_names, *sys.builtin_module_names))
MAX_MODULES = 256  # modules read for one start (the script's imports, their packages' modules...); past it: all
_LOADERS = frozenset(("import_module", "__import__", "run_module", "find_spec", "find_module", "find_loader",
                      "resolve_name", "get_loader", "get_data"))
# Names the standard library imports itself where present (copy's `from org.python.core import PyStringMap`):
# a namespace package of these in a folder of sys.path runs, for a program that imports copy, dataclasses...
STDLIB_OPTIONAL = ("org", "java")
# Calls that run a file by its path, or change where Python looks: what they run is not known from names
_BY_PATH = frozenset(("run_path", "addsitedir", "spec_from_file_location", "SourceFileLoader", "SourcelessFileLoader",
                      "ExtensionFileLoader", "load_source", "load_compiled", "load_dynamic", "load_module",
                      "exec_module", "spec_from_loader", "module_from_spec", "path_hooks", "meta_path"))
_SYS_PATHS = frozenset(("path", "meta_path", "path_hooks", "path_importer_cache"))


class Imports(NamedTuple):
    """The top-level module names a program imports, and whether it decides one when it runs (``dynamic``: a
    loader called with a variable, ``exec`` of a text not written in it, so any module of the folder may run), runs
    a file by its path or changes where Python looks (``moves_path``: ``sys.path``, ``spec_from_file_location``,
    ``site.addsitedir``), or changes folder (``chdir``: where ``-c``'s path entry ``''`` then looks)."""

    names: frozenset[str]
    dynamic: bool
    moves_path: bool
    chdir: bool = False


class Followed(NamedTuple):
    """What a start imports from one folder (paths relative to it, glob patterns): ``surface`` (refused where new,
    or named as the standard library's), ``whole`` (always refused); ``moves_path`` where a module it runs changes
    where Python looks, so what runs is not known."""

    surface: tuple[str, ...]
    whole: tuple[str, ...]
    moves_path: bool


def imports_of(source: str | bytes) -> Imports | None:
    """The imports of the Python ``source`` (``import a.b``, ``from a import b``, and the constant names given to
    ``importlib.import_module`` (a relative one resolved from its ``package``), ``__import__``,
    ``runpy.run_module``, under any name they are imported as); None where it does not parse (too deep, not
    Python), so that what it imports is not known."""
    key = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    if key in _PARSED:
        return _PARSED[key]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        found = None
    else:
        found = _imports(tree)
    if len(_PARSED) >= 512:
        _PARSED.clear()
    _PARSED[key] = found
    return found


_PARSED: dict[bytes, Imports | None] = {}  # a hook's modules, read at every write: parsed once


def _statements(tree: ast.AST) -> tuple[set[str], set[str], dict[str, str], bool]:
    """The names ``import``/``from`` statements import, the names ``sys`` is bound to (``import sys as s``), the
    names bound to what a module holds (``from importlib import import_module as load``: load -> import_module),
    and whether one imports ``sys.path`` itself (``from sys import path``)."""
    names: set[str] = set()
    sys_names = {"sys"}
    called: dict[str, str] = {}
    moves_path = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name.split(".")[0])
                if alias.name == "sys":
                    sys_names.add(alias.asname or "sys")
        elif isinstance(node, ast.ImportFrom):
            if not node.level and node.module:
                names.add(node.module.split(".")[0])
            for alias in node.names:
                called[alias.asname or alias.name] = alias.name
                moves_path = moves_path or (node.module == "sys" and alias.name in _SYS_PATHS)
    return names, sys_names, called, moves_path


def _imports(tree: ast.AST) -> Imports:
    names, sys_names, called, moves_path = _statements(tree)
    dynamic = chdir = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            name = called.get(name, name)
            chdir = chdir or name in ("chdir", "fchdir")
            if name in ("exec", "eval", "compile"):  # a text of its own: read as a program, or not known
                text = node.args[0] if node.args else None
                inner = imports_of(text.value) if isinstance(text, ast.Constant) and isinstance(text.value, str) \
                    else None
                if inner is None:
                    dynamic = True
                else:
                    names |= inner.names
                    dynamic, moves_path = dynamic or inner.dynamic, moves_path or inner.moves_path
            elif name in _LOADERS:
                loaded = _loaded_name(node)
                if loaded is None:
                    dynamic = True
                else:
                    names.add(loaded)
            elif name in _BY_PATH:
                moves_path = True
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in sys_names \
                and node.attr in _SYS_PATHS:
            moves_path = True
        elif isinstance(node, ast.Name) and called.get(node.id) in _BY_PATH:
            moves_path = True
    return Imports(frozenset(name for name in names if name.isidentifier()), dynamic, moves_path, chdir)


def _loaded_name(call: ast.Call) -> str | None:
    """The top-level name a loader call loads (``import_module('.x', package='p')``: ``p``), or None."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    first = call.args[0] if call.args else next((keywords[k] for k in ("name", "mod_name", "fullname")
                                                   if k in keywords), None)
    if not isinstance(first, ast.Constant) or not isinstance(first.value, str) or not first.value.strip("."):
        return None
    if first.value.startswith("."):  # relative to the package given
        package = call.args[1] if len(call.args) > 1 else keywords.get("package")
        if not isinstance(package, ast.Constant) or not isinstance(package.value, str) or not package.value:
            return None
        return package.value.split(".")[0]
    return first.value.split(".")[0].split(":")[0]  # pkgutil.resolve_name's `a.b:c`


def follow(sources: list[str | bytes], read: Callable[[str], bytes | None],
           modules: Callable[[str], list[str] | None]) -> Followed:
    """What a start whose own code is ``sources`` (a script's text, ``-c``'s code; :data:`TOO_LARGE` for one
    not read) imports from its folder: the surface, and every file of each name it imports, followed through
    what the folder's modules of those names import: ``read(rel)`` reads a file of the folder (None where
    missing), ``modules(rel)`` lists the ``.py`` files below a folder of it (None where it is none; a list past
    :data:`MAX_MODULES` where it holds more). Not known (a computed name, a start that does not parse, more than
    :data:`MAX_MODULES` modules): every module below the folder (:data:`ANY_MODULE`)."""
    whole = [f"{name}/**" for name in STDLIB_OPTIONAL]
    pending: list[tuple[str | bytes, bool]] = [(source, True) for source in sources]
    seen: set[str] = set()
    count = 0
    while pending:
        source, entry = pending.pop()
        imports = imports_of(source)
        if imports is None and not entry and source != TOO_LARGE:
            continue  # a module of the folder that does not parse fails its import: nothing of it runs
        if imports is None or imports.dynamic:
            return Followed(SURFACE, ANY_MODULE, False)
        if imports.moves_path:
            return Followed(SURFACE, (), True)
        for name in sorted(imports.names - seen):
            seen.add(name)
            whole += [f"{name}.*", f"__pycache__/{name}.*", f"{name}/**"]
            files = [f"{name}.py"] + (modules(name) or [])
            count += len(files)
            if count > MAX_MODULES:
                return Followed(SURFACE, ANY_MODULE, False)
            for rel in files:
                text = read(rel)
                if text is not None:
                    pending.append((text, False))
    return Followed(SURFACE, tuple(whole), False)


ANY_MODULE = ("**.py", "**.pyc", "**.so", "**.pyd")  # what any import may run below a folder (not its other files)
TOO_LARGE = b"\x00"  # a module past what is read of one: Python's parser refuses a NUL, so its imports are not known


def shadows(key: str) -> bool:
    """Whether the existing file ``key`` (a path as hookruns folds it, case-folded) of a surface is a module the
    standard library names: ``json.py``, ``re/__init__.py``, ``__pycache__/json.cpython-311.pyc``."""
    parts = key.split("/")
    name = parts[-1].split(".")[0]
    if name == "__init__" and len(parts) > 2:  # a package's: its folder's name
        name = parts[-3] if parts[-2] == "__pycache__" and len(parts) > 3 else parts[-2]
    return name in STDLIB
