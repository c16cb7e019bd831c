"""The sandbox prelude: helpers, written in the Python subset pydantic-monty runs, that the source rewrite
(codeact.core.rewrite) calls where the sandbox would give a different answer than CPython's, or none at all.

Each helper names the pydantic-monty gap it covers (:data:`GAPS`); tests/runtime/test_prelude.py holds, per gap, a
program that shows the gap in the bare sandbox, so that test fails once upstream closes it and the helper (and the
rewrite that calls it) can be deleted. Only the helpers a program's rewritten code names, and what they use, are sent
to the sandbox (:func:`source_for`), before the program, in the same session; their annotations and docstrings are
left out there.

The helper modules are real Python that ruff and mypy check, and the host calls :func:`text.codeact_re_translate` and
:func:`text.codeact_re_translate_template` itself to rewrite literal patterns at no cost to the run. Inside the sandbox they use only
the subset: no generators, no inheritance, no ``callable``, no ``@property``.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from functools import lru_cache
from typing import Any

PREFIX = "codeact_"  # every helper's name starts with it; a program's own names do not
_MODULES = ("text", "files", "objects", "modules")  # in this order: a later one may use an earlier one's names

# name -> the upstream gap (pydantic-monty 1.6.0) it works around; a test per entry shows the gap is still there
GAPS: dict[str, str] = {
    "codeact_re_pattern": "re: `$` matches only at the very end (CPython: before a final newline too); re.ASCII "
                      "and (?a) are ignored",
    "codeact_re_template": "re.sub: a template `\\1` followed by a letter, digit or `_` drops the group and those "
                       "characters; `\\n`, `\\t` in a template stay a backslash and a letter",
    "codeact_re_sub": "re.sub: a function as the replacement is not supported; re.subn is missing",
    "codeact_re_subn": "re.subn is missing",
    "codeact_read_text": "Path.read_text(encoding=..., errors=...) takes no keyword arguments",
    "codeact_open": "open(..., errors=...) and encodings other than UTF-8 are refused",
    "codeact_maketrans": "str.maketrans and str.translate are missing",
    "codeact_translate": "str.maketrans and str.translate are missing",
    "codeact_len": "len() ignores a class's __len__",
    "codeact_cmp": "<, >, <=, >= ignore a class's __lt__/__gt__/__le__/__ge__ and dataclass(order=True)",
    "codeact_sorted": "sorted(), min(), max() ignore a class's __lt__ and dataclass(order=True); paths do not compare",
    "codeact_min": "min() ignores a class's __lt__ and dataclass(order=True)",
    "codeact_max": "max() ignores a class's __lt__ and dataclass(order=True)",
    "codeact_dataclasses": "dataclasses.fields/asdict/astuple/replace are missing; dataclass(order=True) is refused",
    "codeact_vars": "vars() is missing",
    "codeact_set": "a set iterates in the order its items were added (CPython: hash order, so list({3, 1, 2}) is "
                   "[1, 2, 3]); the rewrite also writes literal sets of numbers in CPython's order",
    "codeact_heapq": "the heapq module is missing",
    "codeact_StringIO": "the io module (io.StringIO) is missing",
    "codeact_ChainMap": "collections.ChainMap is missing",
    "codeact_cmp_to_key": "functools.cmp_to_key is missing",
    "codeact_total_ordering": "functools.total_ordering is missing",
    "codeact_TypedDict": "typing.TypedDict is missing (and a class cannot inherit from it)",
    "codeact_ConfigParser": "the configparser module is missing",
    "codeact_urlparse": "urllib.parse is missing (urlparse/urlsplit give objects with attributes)",
    "codeact_Template": "string.Template is missing",
    "codeact_set_method": "set.union/intersection/difference take one argument only",
    "codeact_set_call": "set.intersection(*sets) (a set method taken from the type) is missing",
}


@lru_cache(maxsize=1)
def _definitions() -> tuple[dict[str, str], dict[str, frozenset[str]], tuple[str, ...]]:
    """Each top-level name of the helper modules: its sandbox source (no annotations, no docstrings), the
    top-level names it uses, and the order of definition."""
    import ast
    from pathlib import Path

    from ...pyast import parse

    here = Path(__file__).parent
    sources: dict[str, str] = {}
    uses: dict[str, frozenset[str]] = {}
    order: list[str] = []
    for module in _MODULES:
        tree = parse((here / f"{module}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            names = _defined(node)
            if not names:
                continue
            plain = _plain(node)
            text = ast.unparse(plain)
            used = frozenset(n.id for n in ast.walk(plain) if isinstance(n, ast.Name))
            for name in names:
                sources[name], uses[name] = text, used
                order.append(name)
    return sources, uses, tuple(order)


def _defined(node: Any) -> list[str]:
    import ast

    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    if isinstance(node, ast.Import) and node.names[0].asname:
        return [node.names[0].asname]
    return []


def _plain(node: Any) -> Any:
    """``node`` without annotations and docstrings: what the sandbox needs of it."""
    import ast
    import copy

    node = copy.deepcopy(node)
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)
    for item in ast.walk(node):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            item.returns = None
            for arg in (*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs, item.args.vararg,
                        item.args.kwarg):
                if arg is not None:
                    arg.annotation = None
        if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
            body = item.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
                    body[0].value.value, str):
                item.body = body[1:] or [ast.Pass()]
        if isinstance(item, ast.ClassDef):
            item.body = [ast.Assign(targets=[s.target], value=s.value, lineno=s.lineno)
                         if isinstance(s, ast.AnnAssign) and s.value is not None else s for s in item.body]
    return node


def names_in(code: str) -> set[str]:
    """The helper names ``code`` mentions."""
    import re

    return set(re.findall(PREFIX + r"\w+", code)) & set(_definitions()[0])


def source_for(names: set[str], ordered: tuple[str, ...] = ()) -> str:
    """The sandbox source defining ``names`` and everything they use, in definition order; ``ordered``: the classes
    the program declared ``@dataclass(order=True)`` (the rewrite drops the option the sandbox refuses)."""
    sources, uses, order = _definitions()
    wanted: set[str] = set()
    pending = [n for n in names if n in sources]
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(n for n in uses[name] if n in sources and n not in wanted)
    if ordered:
        wanted.add("codeact_ordered")
    texts = list(dict.fromkeys(sources[n] for n in order if n in wanted))
    if ordered:
        texts.append(f"codeact_ordered = {tuple(ordered)!r}")
    return "\n".join(texts) + "\n"


def stubs_for(names: set[str]) -> str:
    """Declarations of ``names`` for the type check: helpers take and give anything."""
    return "".join(f"def {n}(*args: Any, **kwargs: Any) -> Any: ...\n" for n in sorted(names))


__all__ = ["GAPS", "PREFIX", "names_in", "source_for", "stubs_for"]
