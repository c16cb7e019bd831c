"""The user's own tools: Python files in ``<config dir>/tools/*.py``, loaded on the host and offered as ``user``.

A file ``tools/word_count.py`` defines a function ``word_count(...)``; its signature and docstring become the tool's
schema and description, exactly as for the built-ins. An optional ``TOOL = {"name", "description", "parameters"}``
overrides any of them (``parameters`` is a JSON Schema of the keyword arguments). If the function's first parameter
is named ``ctx`` it receives the :class:`~codeact.core.tool.ToolContext` (workspace policy, limits, environment).
User tools run on the host with the user's permissions; they are the user's code, not the model's.
A broken file is reported by name through ``warn`` and skipped; it never stops a run.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import keyword
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.tool import Tool, ToolContext, tool_from_function
from ..paths import user_config_dir

_MODULE_PREFIX = "codeact_user_tools."


def user_tools_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where user tools live: ``<config dir>/tools``."""
    return user_config_dir(environ) / "tools"


def load_user_tools(ctx: ToolContext, environ: Mapping[str, str] | None,
                    warn: Callable[[str], None] | None = None) -> list[Tool]:
    """Every loadable user tool, in file-name order; each broken file is reported and skipped."""
    folder = user_tools_dir(environ)
    if not folder.is_dir():
        return []
    report = warn or _stderr
    tools: list[Tool] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith(("_", ".")):
            continue  # __init__.py, helpers and editor files are not tools
        try:
            tool = _load(path, ctx)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a user file may fail in any way; never fatal
            report(f"user tool {path.name}: {_reason(exc)}; skipped")
            continue
        if tool.name in seen:
            report(f"user tool {path.name}: another file already defines a tool named {tool.name!r}; skipped")
            continue
        seen.add(tool.name)
        tools.append(tool)
    return tools


def _load(path: Path, ctx: ToolContext) -> Tool:
    import importlib.util
    import inspect

    module_name = _MODULE_PREFIX + path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and typing look a module up by name while it loads
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    meta = getattr(module, "TOOL", None)
    if meta is not None and not isinstance(meta, dict):
        raise TypeError("TOOL must be a dict with name, description and parameters")
    meta = dict(meta or {})
    unknown = sorted(set(meta) - {"name", "description", "parameters", "returns"})
    if unknown:
        raise ValueError(f"TOOL has unknown key(s) {', '.join(unknown)}; valid: name, description, parameters, returns")
    func = _find_function(module, path.stem, meta.get("name"))
    name = meta.get("name") or path.stem
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"tool name {name!r} is not a Python identifier")
    params = list(inspect.signature(func).parameters.values())
    wants_ctx = bool(params) and params[0].name == "ctx"
    if any(p.kind is p.POSITIONAL_ONLY for p in params[1 if wants_ctx else 0:]):
        raise TypeError(f"{func.__name__}() has positional-only parameters; tools are called with keywords")
    tool = tool_from_function(func, name=name, source="user", bind=ctx if wants_ctx else None,
                              skip_first=wants_ctx)
    if "parameters" in meta:
        schema = meta["parameters"]
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise TypeError("TOOL['parameters'] must be a JSON Schema object: {'type': 'object', 'properties': {...}}")
        tool = _replace(tool, parameters={"type": "object", **schema})
    if "description" in meta:
        if not isinstance(meta["description"], str):
            raise TypeError("TOOL['description'] must be a string")
        tool = _replace(tool, description=meta["description"].strip().splitlines()[0] if meta["description"].strip()
                        else "", doc=meta["description"].strip() or tool.doc)
    if "returns" in meta:
        tool = _replace(tool, returns=str(meta["returns"]))
    return tool


def _find_function(module: Any, stem: str, declared: Any) -> Callable[..., Any]:
    import inspect

    for candidate in (stem, declared):
        if isinstance(candidate, str) and inspect.isfunction(found := getattr(module, candidate, None)):
            return found
    own = [obj for n, obj in vars(module).items()
           if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not n.startswith("_")]
    if len(own) == 1:
        return own[0]
    wanted = " or ".join(repr(c) for c in dict.fromkeys((stem, declared)) if isinstance(c, str))
    raise LookupError(f"no function named {wanted} (a tool file defines a function named like the file, "
                      f"or TOOL['name'])" + (f"; found {', '.join(f.__name__ for f in own)}" if own else ""))


def _replace(tool: Tool, **changes: Any) -> Tool:
    return tool._replace(**changes)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"syntax error on line {exc.lineno}: {exc.msg}"
    return f"{type(exc).__name__}: {exc}"


def _stderr(message: str) -> None:
    print(f"codeact: warning: {message}", file=sys.stderr)


__all__ = ["load_user_tools", "user_tools_dir"]
