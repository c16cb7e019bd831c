"""Tool calls whose arguments are all literals, checked on the host against the tools' JSON Schemas.

The type check exists to refuse a bad tool call before any tool runs. When every mention of a tool in a program is
a direct call with keyword arguments whose values are literals (``view(path="a.py")``, ``demo.echo(text=f"{x}")``,
``grep(pattern="x", max_results=10**6)``: whole-number arithmetic on literals counts as one) and every such call is
valid for its schema — no positional argument, no unknown keyword, every required one given, every value of the type
the schema asks for — there is nothing left for the checker to refuse, and the run can skip
it (a warm run's budget could not hold the checker's time). Anything else (a value computed at run time, a tool passed around as a value, a schema this module
does not read) answers ``False``, and the checker decides, with its own messages.
"""
from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from .toolset import offers

_MISSING = object()


def all_valid(tree: ast.AST, tools: Mapping[str, Any]) -> bool:
    """Whether every tool mentioned in ``tree`` is called directly, with literal arguments its schema accepts."""
    called: set[int] = set()  # ids of the nodes naming a tool in a checked call
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _tool_name(node.func)
            if name is not None and name in tools:
                if not _call_valid(node, tools[name].parameters):
                    return False
                called.add(id(node.func))
                if isinstance(node.func, ast.Attribute):
                    called.add(id(node.func.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and offers(tools, node.id) and id(node) not in called:
            return False  # a tool (or namespace) used other than in a checked call
    return True


def _tool_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _call_valid(call: ast.Call, schema: Mapping[str, Any]) -> bool:
    if call.args or not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return False
    properties = schema.get("properties") or {}
    given: set[str] = set()
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg in given:  # **kwargs, or a keyword twice
            return False
        given.add(keyword.arg)
        prop = properties.get(keyword.arg, _MISSING)
        if prop is _MISSING or not _literal_valid(keyword.value, prop):  # an unknown keyword: the checker says
            return False
    return set(schema.get("required") or ()) <= given


def _literal_valid(node: ast.expr, schema: Any) -> bool:
    if isinstance(node, ast.JoinedStr):  # an f-string: a str whatever its parts
        return _accepts(schema, "x", value_known=False)
    value = _int_arithmetic(node)
    if value is _MISSING:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
    return _accepts(schema, value)


_INT_OPS: dict[type[ast.operator], Any] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
}
_INT_BITS = 64  # larger values, and anything that could take long to compute, go to the checker


def _int_arithmetic(node: ast.expr) -> Any:
    """The value of whole-number arithmetic on int literals (``10**6``, ``2 * 1024``, ``-1``) as Python computes
    it; ``_MISSING`` for anything else (a float, a name, a division by zero, a result past 64 bits)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if type(value) is int and value.bit_length() <= _INT_BITS else _MISSING
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _int_arithmetic(node.operand)
        if operand is _MISSING:
            return _MISSING
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        left, right = _int_arithmetic(node.left), _int_arithmetic(node.right)
        if left is _MISSING or right is _MISSING:
            return _MISSING
        if isinstance(node.op, ast.Pow) and (right < 0 or right * max(abs(left), 1).bit_length() > 2 * _INT_BITS):
            return _MISSING  # a float (negative power), or too large to compute at all
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            return _MISSING
        value = _INT_OPS[type(node.op)](left, right)
        return value if value.bit_length() <= _INT_BITS else _MISSING
    return _MISSING


_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: isinstance(v, dict),
}
_READ = {"type", "items", "anyOf", "oneOf", "enum", "default", "description", "title", "examples", "format",
         "additionalProperties"}


def _accepts(schema: Any, value: Any, *, value_known: bool = True) -> bool:
    """Whether ``schema`` surely accepts ``value``; ``False`` when unsure (a keyword this module does not read)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, Mapping) or set(schema) - _READ:
        return False
    if "enum" in schema and (not value_known or value not in schema["enum"]):
        return False
    for key in ("anyOf", "oneOf"):
        if key in schema:
            matches = sum(_accepts(s, value, value_known=value_known) for s in schema[key])
            if matches == 0 or (key == "oneOf" and matches > 1):
                return False
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(k in _TYPES and _TYPES[k](value) for k in kinds):
            return False
    if isinstance(value, (list, tuple)) and "items" in schema:
        return all(_accepts(schema["items"], item) for item in value)
    if isinstance(value, dict) and schema.get("additionalProperties", True) is not True:
        return False
    return True


__all__ = ["all_valid"]
