"""What a Python start imports from the folder first on its ``sys.path``: the files a hook's Python command runs
besides the script it names (issue 40). Python puts the script's folder (or, for ``-c`` and ``-m``, the folder it
runs in) before the standard library, so a ``json.py`` created there runs when the script imports ``json``."""
from __future__ import annotations

import ast
from typing import NamedTuple

# What Python imports from a folder of sys.path: its modules and their cached bytecode, extension modules, and
# its packages' __init__ (a package of the folder's shadows a module of the standard library of the same name)
SURFACE = ("*.py", "*.pyc", "*.so", "*.pyd", "__pycache__/*", "*/__init__.*", "*/__pycache__/__init__.*")
MAX_MODULES = 32  # modules of the folder read for one start (the script's imports, theirs...); past it: the folder
_LOADERS = frozenset(("import_module", "__import__", "run_module", "find_spec", "find_module"))  # a name argument


class Imports(NamedTuple):
    """The top-level module names a program imports, and whether it decides one when it runs (``dynamic``: a
    loader called with a variable, so any module of the folder may run) or changes where Python looks
    (``moves_path``: ``sys.path``, ``site.addsitedir``)."""

    names: frozenset[str]
    dynamic: bool
    moves_path: bool


def imports_of(source: str | bytes) -> Imports | None:
    """The imports of the Python ``source`` (``import a.b``, ``from a import b``, and the constant names given to
    ``importlib.import_module``, ``__import__``, ``runpy.run_module``); None where it does not parse (too deep,
    not Python), so that what it imports is not known."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    dynamic = moves_path = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in _LOADERS:
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in (
                    "name", "mod_name", "fullname")), None)
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value:
                    names.add(first.value.lstrip(".").split(".")[0])
                else:
                    dynamic = True
            elif called in ("addsitedir", "run_path"):
                moves_path = True
        elif isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            moves_path = True
    return Imports(frozenset(name for name in names if name.isidentifier()), dynamic, moves_path)
