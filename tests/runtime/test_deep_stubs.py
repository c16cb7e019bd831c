"""A tool whose JSON Schema nests deeply (an MCP server's, say): its stub stops at MAX_TYPE_DEPTH, because
pydantic-monty refuses type-check stubs nested ~150 deep for the whole session, so one such tool stopped every
type-checked run; a refusal of the session's set-up (MontyConfigurationError from 1.6.0, a MontyRuntimeError
before) is the program's error, never a host traceback."""
from __future__ import annotations

from typing import Any

import pytest

from codeact.core.stubs import MAX_TYPE_DEPTH, python_type


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def test_an_annotation_stops_at_the_depth_cap() -> None:
    assert python_type(nested(2)) == "list[list[int]]"
    deep = python_type(nested(5000))  # past CPython's recursion limit too
    assert deep.count("list[") == MAX_TYPE_DEPTH and deep.endswith("Any" + "]" * MAX_TYPE_DEPTH)
    assert python_type({"anyOf": [nested(400), {"type": "string"}]}).count("[") <= MAX_TYPE_DEPTH


def _program(stubs: str) -> Any:
    from codeact.backends.program import Program
    from codeact.core.limits import Limits

    # a function of its own: the program is type-checked with the stubs
    return Program(code="def g():\n    return 41\ng() + 1\n", tools={}, stubs=stubs, limits=Limits(timeout=10),
                   call_tool=lambda *_a: None, on_print=lambda _t: None, pin_cpu=False)


def test_a_deep_schemas_stub_runs_type_checked() -> None:
    pytest.importorskip("pydantic_monty")
    from codeact.backends.monty import MontyBackend

    stub = f"def f(x: {python_type(nested(300))}) -> str: ...\n"
    assert MontyBackend().execute(_program(stub)) == 42


def test_stubs_the_sandbox_refuses_are_the_programs_error() -> None:
    pytest.importorskip("pydantic_monty")
    from codeact.backends.monty import MontyBackend
    from codeact.errors import ProgramError

    stub = "def f(x: " + "list[" * 300 + "int" + "]" * 300 + ") -> str: ...\n"
    with pytest.raises(ProgramError) as caught:
        MontyBackend().execute(_program(stub))
    assert caught.value.info.type == "RuntimeError" and "too deeply nested" in caught.value.info.message
