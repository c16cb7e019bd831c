"""The host-side check of literal tool calls (codeact.core.literal_calls): what lets a run skip the type check."""
from __future__ import annotations

import ast

import pytest

from codeact.core.literal_calls import all_valid
from codeact.core.tool import Tool


def _tool(name: str, properties: dict, required: tuple[str, ...] = (), **extra: object) -> Tool:
    schema = {"type": "object", "properties": properties, "additionalProperties": False, **extra}
    if required:
        schema["required"] = list(required)
    return Tool(name=name, description="", parameters=schema, returns="Any", call=lambda **_kw: None)


TOOLS = {
    "view": _tool("view", {"path": {"type": "string"}, "view_range": {"anyOf": [
        {"type": "array", "items": {"type": "integer"}}, {"type": "null"}], "default": None}}, ("path",)),
    "demo.echo": _tool("demo.echo", {"text": {"type": "string"}, "upper": {"type": "boolean", "default": False}},
                       ("text",)),
    "pick": _tool("pick", {"mode": {"enum": ["a", "b"]}, "n": {"type": "number"}}),
    "limit": _tool("limit", {"n": {"type": "integer"}}),
}


@pytest.mark.parametrize("code", [
    'view(path="a.py")',
    'print(view(path="a.py", view_range=[1, 2]))',
    'x = 3\nprint(demo.echo(text=f"{x}", upper=True))',
    'pick(mode="b", n=2.5)',
    'pick(n=2)',
    'limit(n=10**7)',  # whole-number arithmetic on literals is a literal too
    'limit(n=-2 * 1024 + 7 // 2 % 3)',
    'y = [1, 2]\nprint(len(y))',  # no tool at all
])
def test_literal_calls_that_match_their_schema_need_no_checker(code: str) -> None:
    assert all_valid(ast.parse(code), TOOLS)


@pytest.mark.parametrize("code, why", [
    ('view("a.py")', "positional"),
    ('view(pth="a.py")', "unknown keyword"),
    ('view(view_range=[1, 2])', "missing required"),
    ('view(path=3)', "wrong literal type"),
    ('view(path="a", view_range=["1"])', "wrong item type"),
    ('p = "a.py"\nview(path=p)', "a value computed at run time"),
    ('f = view\nf(path="a.py")', "a tool as a value"),
    ('demo.echo(text="x", upper=1)', "an int for a bool"),
    ('d = demo\nd.echo(text="x")', "a namespace as a value"),
    ('pick(mode="c")', "not in the enum"),
    ('pick(mode=f"a")', "an f-string cannot be checked against an enum"),
    ('pick(n=True)', "a bool is not a number here"),
    ('view(**{"path": "a"})', "**kwargs"),
    ('view(path="a", view_range=[10**7])', "arithmetic is folded only as a whole value"),
    ('view(path="a" * 3)', "only int arithmetic is folded"),
    ('view(path=10**7)', "folded arithmetic is checked against the schema like any literal"),
    ('limit(n=2**-1)', "a negative power is a float"),
    ('limit(n=10 / 2)', "a true division is a float"),
    ('limit(n=1 // 0)', "a division by zero is left to the run"),
    ('limit(n=10**100)', "a value past 64 bits goes to the checker"),
    ('limit(n=10**10**10)', "never computed: far past 64 bits"),
    ('limit(n=True + 1)', "a bool is not an int literal here"),
])
def test_anything_else_goes_to_the_checker(code: str, why: str) -> None:
    assert not all_valid(ast.parse(code), TOOLS), why
