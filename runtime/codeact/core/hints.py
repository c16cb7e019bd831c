"""Hints that teach: what to write instead when a program hits a gap of the sandbox's Python subset or calls a tool
wrongly. Each hint names a replacement that runs, so one rewrite of the program passes."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_AVAILABLE = ("json, re, math, statistics, datetime, tomllib, collections, itertools, functools, typing, pathlib, os, "
              "os.path, glob, fnmatch, random, time, hashlib, base64, copy, csv, sys, dataclasses, textwrap, "
              "difflib, heapq, shlex, string, io (StringIO), html, urllib.parse, pprint")
# Modules the subset lacks, and what to use instead.
_MODULES: dict[str, str] = {
    "ast": "the sandbox has no `ast`: use the outline tool where it is enabled (definitions, imports, docstrings "
           "per file), else `re` over view(path=...)",
    "subprocess": "run commands with the bash tool (if enabled): bash(command='...')",
    "shutil": "copy or move files with view(path=...) and create(path=..., file_text=...)",
    "tempfile": "programs do not write files directly: keep data in variables, or create(path=..., "
                "file_text=...) a file in the workspace",
    "enum": "use plain constants or a dict: COLORS = {'RED': 1, 'GREEN': 2}",
    "operator": "write the function out: key=lambda t: t[1] for itemgetter(1), key=lambda o: o.name for "
                "attrgetter('name'), lambda a, b: a + b for operator.add",
    "abc": "write plain classes (no inheritance) or functions",
    "urllib.request": "fetch with the web tool (if enabled)",
    "requests": "fetch with the web tool (if enabled)",
    "inspect": "read the source with view(path=...)",
    "yaml": "the sandbox has no YAML parser: read the file with view(path=...) and pick lines with re",
    "toml": "use tomllib: tomllib.loads(view(path='pyproject.toml'))",
}

_LONGEST = 4096  # characters of an error message the hints read

_HINTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"class inheritance"), "Class inheritance is not supported: use a plain class, a dict or functions; "
     "raise built-in exceptions (ValueError, RuntimeError) instead of defining your own."),
    (re.compile(r"'del' statement"), "`del` is not supported: build a new dict/list without the item "
     "(e.g. {k: v for k, v in d.items() if k != key}) or use d.pop(key)."),
    (re.compile(r"\byield\b"), "Generators (`yield`) are not supported: build and return a list instead."),
    (re.compile(r"is not an iterator"), "Generator expressions become lists here, so next(...) fails on them: "
     "use a list comprehension and take [0], or a for loop with break."),
    (re.compile(r"\basdict\b"), "dataclasses.asdict is missing: build the dict yourself, e.g. {'a': p.a, 'b': p.b}."),
    (re.compile(r"\b(?:staticmethod|classmethod)\b|@property|'property'"), "@staticmethod, @classmethod and @property "
     "are not supported: use module-level functions or plain attributes."),
    (re.compile(r"VERBOSE"), "re.VERBOSE is not supported: write the pattern on one line."),
    (re.compile(r"callable replacement is not yet supported"), "re.sub with a function is not supported: loop "
     "over re.finditer(pattern, text) and join text[last:m.start()] + your replacement, then the rest."),
    (re.compile(r"module 're' has no attribute 'subn'"), "re.subn is missing: use new = re.sub(p, r, text) and "
     "count with len(re.findall(p, text))."),
    (re.compile(r"cannot suspend in this synchronous context"), "A tool cannot be called from a function that a "
     "built-in calls back (itertools.groupby(key=...), defaultdict(factory), ...): call the tool in a loop or "
     "comprehension first, e.g. sizes = {p: len(view(path=p)) for p in paths}, then key=sizes.get."),
    (re.compile(r"cannot import name '\w+' from 'pathlib'"), "Only part of pathlib exists here: work on path "
     "strings with os.path (basename, dirname, splitext, join, normpath)."),
    (re.compile(r"module 'sys' has no attribute 'exit'|name '(?:exit|quit)' is not defined"), "sys.exit() and "
     "exit() do not exist here: let the program end (put the work in a function and return early), or raise "
     "RuntimeError('why') to fail."),
    (re.compile(r"exceptions can only be called with zero or one string argument"), "Exceptions take one string "
     "here: raise ValueError(f'bad value {x!r} in {path}')."),
    (re.compile(r"'(?:encoding|errors)' argument is not yet supported"), "open() reads UTF-8 text here: drop "
     "encoding= and errors= (a file that is not UTF-8 raises UnicodeDecodeError; read its bytes with "
     "open(path, 'rb').read())."),
    (re.compile(r"no attribute 'OrderedDict'|cannot import name 'OrderedDict'"), "dicts keep insertion order: use a "
     "plain dict (and dict(sorted(d.items())) to reorder)."),
    (re.compile(r"module '[\w.]+' has no attribute"), "The sandbox's version of that module lacks this name; use "
     "another function of the module or a few lines of plain Python."),
    (re.compile(r"the sandbox has no environment or network access"), "os.environ, os.getenv and the network are "
     "closed to programs; files are written with create(path=..., file_text=...) or edit(path=..., old_str=..., "
     "new_str=...)."),
    (re.compile(r"'(?:[\w.]*(?:Error|Exception|Warning))' object has no attribute"), "Attributes of built-in "
     "exceptions (e.msg, e.lineno, e.filename, ...) are missing in the sandbox: use str(e), which holds the whole "
     "message (for json: 'Expecting value: line 1 column 1 (char 0)'), or e.args[0]."),
    (re.compile(r"has no attribute '(?:__\w+__)'"), "Dunder attributes are mostly missing in the sandbox: use "
     "type(x).__name__ for a type's name and isinstance() for checks."),
    (re.compile(r"type object '\w+' has no attribute"), "Methods taken from a type (str.lower, dict.get) are not "
     "supported here: use a lambda, e.g. key=lambda s: s.lower()."),
    (re.compile(r"takes keyword arguments only"),
     "Tools take keyword arguments only, e.g. view(path='README.md')."),
]


def hint_for(kind: str, message: str, tools: Mapping[str, Any] | None = None, *,
             result_keys: Mapping[str, list[str]] | None = None) -> str | None:
    """A one-line suggestion for an error, or ``None`` when there is nothing useful to add.

    ``result_keys`` (tool name -> keys of the dicts it returned) lets a KeyError on a tool's result list the keys.
    """
    message = message[:_LONGEST]  # a program's own message may be huge: the hints read its start
    text = f"{kind}: {message}"
    module = re.search(r"No module named '([\w.]+)'", text)
    if module:
        top = module[1].split(".")[0]
        instead = _MODULES.get(module[1]) or _MODULES.get(top)
        return (f"{instead}. " if instead else "") + f"Modules the sandbox has: {_AVAILABLE}."
    keyed = _result_key_hint(kind, message, result_keys or {})
    if keyed:
        return keyed
    attribute = _builtin_attribute_hint(kind, message, result_keys or {})
    if attribute:
        return attribute
    for pattern, hint in _HINTS:
        if pattern.search(text):
            return hint
    name = re.search(r"[Nn]ame [`']([\w.]+)[`'] (?:is not defined|used when not defined)", message)
    if name and tools and name[1] in tools:  # a tool named, not called: partial(view, ...), f = view, map(view, ...)
        tool = name[1]
        same_name = f" For the module named {tool}, write `import {tool}` first." if tool in ("glob",) else ""
        return (f"{tool} is a tool: it can only be called, not held as a value (partial({tool}, ...), f = {tool}, "
                f"map({tool}, ...)). Call it where you need it, e.g. def read(p): return {tool}(...) with its "
                f"keywords, then map(read, items) or [read(p) for p in items].{same_name}")
    if name and tools and "forget to import" not in message:
        import difflib

        close = difflib.get_close_matches(name[1], list(tools), n=1)
        available = ", ".join(sorted(tools)[:20])
        return (f"Did you mean {close[0]}()? " if close else "") + f"Available tools: {available}."
    return None


_BUILTIN_OBJECT = re.compile(r"'(str|bytes|list|dict|set|frozenset|tuple|int|float|bool|Counter|defaultdict|deque|"
                             r"re\.Match|re\.Pattern)' object has no attribute '(\w+)'")


def _builtin_attribute_hint(kind: str, message: str, result_keys: Mapping[str, list[str]]) -> str | None:
    """An AttributeError on a built-in value: a method CPython has but the sandbox cannot take as a value, or (on
    a dict) a key written as an attribute, with the keys of the tool results seen."""
    found = _BUILTIN_OBJECT.search(message) if kind == "AttributeError" else None
    if not found:
        return None
    type_name, attr = found[1].replace("re.", ""), found[2]
    from .rewrite import types_having

    if type_name in types_having(attr):
        return ("The sandbox cannot take this built-in method as a value (or look it up with a computed name): "
                f"call it where you use it, e.g. key=lambda k: d.{attr}(k), or write a for loop.")
    if type_name in ("dict", "Counter", "defaultdict"):
        seen = "; ".join(f"{t}() gives {', '.join(repr(k) for k in keys)}" for t, keys in result_keys.items())
        return (f"A dict has keys, not attributes: write d[{attr!r}] or d.get({attr!r})"
                + (f" (tool results are dicts: {seen})." if seen else "."))
    return None


def _result_key_hint(kind: str, message: str, result_keys: Mapping[str, list[str]]) -> str | None:
    """For ``h['file']`` (KeyError) or ``h.path`` (AttributeError on a dict) on a tool's result: the keys it has."""
    if kind == "KeyError":
        missing = message.strip()
        if len(missing) >= 2 and missing[0] == missing[-1] and missing[0] in "'\"":
            missing = missing[1:-1]
        tools = [(t, keys) for t, keys in result_keys.items() if missing not in keys]
        if not tools:
            return None
        described = "; ".join(f"{t}() gives {', '.join(repr(k) for k in keys)}" for t, keys in tools)
        return f"No key {missing!r} in the tool results: {described}."
    attr = re.search(r"'dict' object has no attribute '(\w+)'", message)
    if kind == "AttributeError" and attr:
        for tool, keys in result_keys.items():
            if attr[1] in keys:
                return f"Tool results are dicts: write item[{attr[1]!r}], not item.{attr[1]} ({tool}() gives " \
                       f"{', '.join(repr(k) for k in keys)})."
    return None


def tool_call_hint(code: str, tool: str, line: int, program: str, tools: Mapping[str, Any]) -> str | None:
    """The hint for a tool call the type check refused: the call rewritten with keywords, a close tool name, or
    the tool's signature."""
    spec = tools.get(tool)
    if code == "too-many-positional-arguments" and spec is not None:
        fixed, dropped = _keyword_call(program, line, tool, spec)
        if fixed:
            return f"Tools take keyword arguments only: write {fixed}{_dropped(tool, dropped)}"
        return "Tools take keyword arguments only, e.g. view(path='README.md')."
    from .stubs import signature

    if code == "unknown-argument" and spec is not None:
        fixed, dropped = _keyword_call(program, line, tool, spec)
        required = spec.parameters.get("required") or []
        if fixed and dropped and all(f"{name}=" in fixed for name in required):
            return f"Write {fixed}{_dropped(tool, dropped)}. Call it as {signature(spec)}."
    if spec is None:  # an unknown tool or namespace member
        import difflib

        close = difflib.get_close_matches(tool, list(tools), n=1)
        available = ", ".join(sorted(tools)[:20])
        return (f"Did you mean {close[0]}()? " if close else f"No tool named {tool}. ") + \
            f"Available tools: {available}."
    return f"Call it as {signature(spec)}."


def _dropped(tool: str, names: list[str]) -> str:
    """What a rewritten call left out, and why."""
    if not names:
        return ""
    why = " (its ** pattern always spans folders)" if tool == "glob" and "recursive" in names else ""
    return f": {tool}() has no {', '.join(names)} parameter{'s' if len(names) > 1 else ''}{why}"


def _keyword_call(program: str, line: int, tool: str, spec: Any) -> tuple[str | None, list[str]]:
    """The first call of ``tool`` on ``line`` with its positional arguments given their parameter names and the
    keywords it does not take left out, and the names left out."""
    import ast

    from ..pyast import parse

    try:
        tree = parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None, []
    props = list(spec.parameters.get("properties") or {})
    required = set(spec.parameters.get("required") or [])
    order = [n for n in props if n in required] + [n for n in props if n not in required]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno)
                and ast.unparse(node.func) == tool):
            continue
        if len(node.args) > len(order) or any(isinstance(a, ast.Starred) for a in node.args):
            return None, []
        parts = [f"{name}={ast.get_source_segment(program, arg) or ast.unparse(arg)}"
                 for name, arg in zip(order, node.args)]
        open_ended = spec.parameters.get("additionalProperties") not in (False, None)
        dropped = [kw.arg for kw in node.keywords if kw.arg is not None and kw.arg not in props and not open_ended]
        parts += [ast.get_source_segment(program, kw) or ast.unparse(kw) for kw in node.keywords
                  if kw.arg not in dropped]
        return f"{tool}({', '.join(parts)})", dropped
    return None, []


def timeout_hint(program: str) -> str:
    """The hint of a run stopped at its time limit: a loop that never ends is the usual cause."""
    import ast

    from ..pyast import parse

    loops: list[int] = []
    try:
        loops = sorted(n.lineno for n in ast.walk(parse(program)) if isinstance(n, ast.While))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        pass
    where = f" (the while loop on line {loops[0]}?)" if loops else ""
    return (f"If the program loops without end{where}, make sure its condition turns false or it breaks, and that "
            "it does not grow the list it iterates; otherwise do less per run, or raise the limit with --timeout.")
