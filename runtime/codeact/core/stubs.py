"""Python signatures and type-check stubs generated from tools' JSON Schemas (built-in, user and MCP alike)."""
from __future__ import annotations

import keyword
from collections.abc import Iterable
from typing import Any

from .tool import Tool

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None",
            "object": "dict", "array": "list"}


def python_type(schema: dict[str, Any] | bool | None) -> str:
    """The Python annotation for a JSON Schema (``Any`` where it cannot say more)."""
    if not isinstance(schema, dict) or not schema:
        return "Any"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = list(dict.fromkeys(python_type(s) for s in schema[key]))
            return "Any" if "Any" in parts else " | ".join(parts)
    if "enum" in schema:
        values = schema["enum"]
        if values and all(isinstance(v, (str, int, bool)) and v is not None for v in values):
            return "Literal[" + ", ".join(repr(v) for v in values) + "]"
        return "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(python_type({**schema, "type": k}) for k in kind))
    if kind == "array" and isinstance(schema.get("items"), dict) and schema["items"]:
        return f"list[{python_type(schema['items'])}]"
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


def stub_source(tools: Iterable[Tool]) -> str:
    """Stub declarations for Monty's type checker: keyword-only functions, MCP servers as namespaces."""
    lines = ["from typing import Any, Literal", ""]
    namespaces: dict[str, list[Tool]] = {}
    for tool in tools:
        if "." in tool.name:
            server, _ = tool.name.split(".", 1)
            namespaces.setdefault(server, []).append(tool)
            continue
        params = _params(tool, typed=True)
        star = "*, " if params and not params[0].startswith("**") else ""
        lines.append(f"def {tool.name}({star}{', '.join(params)}) -> {_checked_return(tool.returns)}: ...")
    for server, members in sorted(namespaces.items()):
        lines.append(f"class _{server}_tools:")
        for tool in members:
            params = _params(tool, typed=True)
            star = "*, " if params and not params[0].startswith("**") else ""
            method = tool.name.split(".", 1)[1]
            # positional-only receiver, so a tool parameter may be called "self"
            lines.append(f"    def {method}(_self, /, {star}{', '.join(params)}) -> {_checked_return(tool.returns)}: ...")
        lines.append(f"{server}: _{server}_tools")
    return "\n".join(lines) + "\n"
