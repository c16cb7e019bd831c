"""Python signatures and type-check stubs generated from tools' JSON Schemas (built-in, user and MCP alike)."""
from __future__ import annotations

import keyword
from collections.abc import Iterable
from typing import Any

from .tool import Tool

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None",
            "object": "dict", "array": "list"}


MAX_TYPE_DEPTH = 16  # an annotation nested deeper is ``Any`` there: the sandbox refuses stubs nested ~150 deep


def python_type(schema: dict[str, Any] | bool | None, depth: int = 0) -> str:
    """The Python annotation for a JSON Schema (``Any`` where it cannot say more, and below
    :data:`MAX_TYPE_DEPTH` levels: one tool's deeply nested schema would make pydantic-monty refuse the stubs of
    every tool, so that no program could run type-checked)."""
    if not isinstance(schema, dict) or not schema or depth >= MAX_TYPE_DEPTH:
        return "Any"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = list(dict.fromkeys(python_type(s, depth + 1) for s in schema[key]))
            return "Any" if "Any" in parts else " | ".join(parts)
    if "enum" in schema:
        values = schema["enum"]
        if values and all(isinstance(v, (str, int, bool)) and v is not None for v in values):
            return "Literal[" + ", ".join(repr(v) for v in values) + "]"
        return "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(python_type({**schema, "type": k}, depth + 1) for k in kind))
    if kind == "array" and isinstance(schema.get("items"), dict) and schema["items"]:
        return f"list[{python_type(schema['items'], depth + 1)}]"
    return _SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"


def _params(tool: Tool, *, typed: bool) -> list[str]:
    props: dict[str, Any] = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    if any(not name.isidentifier() or keyword.iskeyword(name) for name in props):
        return ["**kwargs: Any" if typed else "**kwargs"]
    ordered = [n for n in props if n in required] + [n for n in props if n not in required]
    out = []
    for name in ordered:
        text = f"{name}: {python_type(props[name])}" if typed else name
        if name not in required:
            default = props[name].get("default") if isinstance(props[name], dict) else None
            text += f" = {default!r}" if typed else f"={default!r}"
        out.append(text)
    if tool.parameters.get("additionalProperties") not in (False, None) and typed:
        out.append("**kwargs: Any")
    return out


def signature(tool: Tool) -> str:
    """A readable signature for people and models: ``view(path: str, view_range: list[int] | None = None) -> str``."""
    return f"{tool.name}({', '.join(_params(tool, typed=True))}) -> {tool.returns}"


def _checked_return(annotation: str) -> str:
    """A union return type becomes ``Any`` for the checker: ``github_api(...)["x"]`` must not be refused because
    the result might be a list; the program knows which one it asked for."""
    return "Any" if "|" in annotation else annotation


def stub_source(tools: Iterable[Tool], code: str | None = None) -> str:
    """Stub declarations for Monty's type checker: keyword-only functions, MCP servers as namespaces; given the
    program's ``code``, only for the tools whose name (an MCP tool's server) it mentions: a run's cost then does not
    grow with tools it never names, and the checker reads no other name."""
    lines = ["from typing import Any, Literal", ""]
    namespaces: dict[str, list[Tool]] = {}
    for tool in tools:
        if code is not None and tool.name.split(".", 1)[0] not in code:
            continue
        if "." in tool.name:
            server, _ = tool.name.split(".", 1)
            namespaces.setdefault(server, []).append(tool)
            continue
        lines.append(_stub_line(tool, tool.name, ""))
    for server, members in sorted(namespaces.items()):
        lines.append(f"class _{server}_tools:")
        for tool in members:
            # positional-only receiver, so a tool parameter may be called "self"
            lines.append("    " + _stub_line(tool, tool.name.split(".", 1)[1], "_self, /, "))
        lines.append(f"{server}: _{server}_tools")
    return "\n".join(lines) + "\n"


# (name, returns, receiver, id(parameters)) -> (parameters, line): a tool whose schema is the same object as at an
# earlier run (MCP tools built once per lock: codeact.mcp.bindings) gets its line again without a schema walk
_LINES: dict[tuple[str, str, str, int], tuple[object, str]] = {}


def _stub_line(tool: Tool, name: str, receiver: str) -> str:
    key = (name, tool.returns, receiver, id(tool.parameters))
    kept = _LINES.get(key)
    if kept is not None and kept[0] is tool.parameters:
        return kept[1]
    params = _params(tool, typed=True)
    star = "*, " if params and not params[0].startswith("**") else ""
    line = f"def {name}({receiver}{star}{', '.join(params)}) -> {_checked_return(tool.returns)}: ..."
    if len(_LINES) > 8192:  # bounded: start over rather than grow
        _LINES.clear()
    _LINES[key] = (tool.parameters, line)
    return line
