"""The hyperlight backend without a hypervisor: the guest side runs in a fake sandbox (plain Python in the child
process), everything else is the real code. Real hyperlight runs the same programs where its probe succeeds."""
from __future__ import annotations

import ast
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codeact.backends import Program
from codeact.backends.hyperlight import (
    HyperlightBackend,
    condense,
    guest_source,
    probe_sandbox,
    registration_names,
    rewrite_last_expression,
    sandbox_options,
    stack_mib,
)
from codeact.core.limits import Limits, MiB
from codeact.core.tool import Tool, tool_from_function
from codeact.errors import BackendUnavailable, ProgramError
from codeact.runner import RunResult
from tests.hyperlight.conftest import fake_backend, real_hyperlight_reason

# Programs of the conformance suite (issue 3's workspace): each must give the same answer on both backends.
CONFORMANCE = {
    "todo listing": (
        'hits = grep(pattern=r"TODO", glob="*.py")\n'
        "for h in hits:\n"
        "    print(f\"{h['path']}:{h['line']}: {h['text'].strip()}\")\n"
        "len(hits)\n"
    ),
    "line counts": (
        "counts = {}\n"
        'for path in glob(pattern="**/*.py"):\n'
        "    counts[path] = len(view(path=path).splitlines())\n"
        "counts\n"
    ),
    "json validity": (
        "import json\n"
        "report = {}\n"
        'for path in glob(pattern="*.json", path="config"):\n'
        "    try:\n"
        "        json.loads(view(path=path))\n"
        '        report[path] = "ok"\n'
        "    except ValueError:\n"
        '        report[path] = "invalid"\n'
        "report\n"
    ),
    "import-os lines": (
        'rows = grep(pattern=r"^\\s*(import os|from os)", glob="*.py")\n'
        'sorted(set(r["path"] for r in rows)), len(rows)\n'
    ),
    "caught tool error": (
        "try:\n"
        '    view(path="missing.txt")\n'
        "except FileNotFoundError as exc:\n"
        '    print("missing:", exc)\n'
        '"done"\n'
    ),
    "uncaught tool error keeps its line": 'x = 1\nprint("start")\nview(path="nope/here.txt")\nprint("never")\n',
    "outside the workspace": 'view(path="../outside.txt")\n',
    "runtime error line": "a = [1]\nb = 2\n\nc = a[b]\n",
    "output around tool calls": 'print("before")\nr = glob(pattern="*.md")\nprint("after", r)\nr\n',
    "write then read": 'create(path="notes/new.txt", file_text="hi\\n")\nview(path="notes/new.txt")\n',
    "edit refuses an ambiguous match": (
        'create(path="twice.txt", file_text="a\\na\\n")\n'
        "try:\n"
        '    edit(path="twice.txt", old_str="a", new_str="b")\n'
        "except RuntimeError as exc:\n"
        "    print(exc)\n"
    ),
    "values": '{"tuple": (1, 2), "none": None, "nested": [{"k": 1.5}], "text": "é😀"}\n',
    "a set shows as its repr": "{3}\n",
    "no last expression": "x = 1\n",
    "unknown key": 'd = {}\nd["k"]\n',
}


def normalised(result: RunResult) -> dict[str, Any]:
    data = json.loads(json.dumps(result.to_json()))
    for key in ("duration_ms", "backend", "backend_reason"):
        data.pop(key)
    for call in data["tool_calls"]:
        call.pop("ms")
    return data


@pytest.mark.parametrize("name", list(CONFORMANCE))
def test_guest_side_matches_monty(name: str, run_on) -> None:
    code = CONFORMANCE[name]
    expected = normalised(run_on("monty", code))
    got = normalised(run_on("fake", code))
    assert got == expected


def test_conformance_programs_give_the_expected_answers(run_on) -> None:
    """Spot checks, so the comparison above is not between two wrong answers."""
    todo = run_on("fake", CONFORMANCE["todo listing"])
    assert todo.ok and todo.result == 3 and "src/app.py:6: # TODO: parse arguments" in todo.stdout
    counts = run_on("fake", CONFORMANCE["line counts"]).result
    assert counts["src/app.py"] == 12 and "build/generated.py" not in counts
    assert run_on("fake", CONFORMANCE["json validity"]).result == {
        "config/app.json": "ok", "config/broken.json": "invalid", "config/db.json": "ok"}
    failed = run_on("fake", CONFORMANCE["uncaught tool error keeps its line"])
    assert (failed.ok, failed.error.type, failed.error.line, failed.stdout) == (False, "FileNotFoundError", 3,
                                                                                 "start\n")


def test_open_is_refused_loudly_where_monty_reads_the_workspace(run_on) -> None:
    """monty serves a program's own file idioms from the workspace (backends.sandbox_os); the hyperlight guest does
    not yet, so it refuses them loudly, naming the tools — never an empty or false answer (issue 24 rule 2)."""
    assert run_on("monty", 'open("README.md").read()\n').ok
    refused = run_on("fake", 'open("README.md")\n')
    assert (refused.ok, refused.error.type) == (False, "PermissionError")
    assert "use the tools (view, create, edit, glob, grep" in refused.error.message


def test_positional_arguments_are_refused_with_the_runners_message(run_on) -> None:
    result = run_on("fake", 'view("README.md")\n')
    assert result.error.type == "TypeError"
    assert result.error.message == "view() takes keyword arguments only; call it as view(path=..., view_range=...)"
    assert result.error.line == 1 and result.tool_calls == []


def test_unknown_names_get_the_tool_list(run_on) -> None:
    result = run_on("fake", "x = 1\nveiw(path='README.md')\n")
    assert (result.error.type, result.error.line) == ("NameError", 2)
    assert "Did you mean view()?" in result.error.hint


def test_syntax_errors_are_reported_without_a_child(run_on) -> None:
    result = run_on("fake", "x = 1\ndef f(:\n")
    assert (result.error.type, result.error.line) == ("SyntaxError", 2)


def test_runaway_child_is_killed_at_the_deadline(run_on, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("FAKE_SANDBOX_PID_FILE", str(pid_file))
    started = time.monotonic()
    result = run_on("fake", 'print("working")\nglob(pattern="*.md")\nwhile True:\n    pass\n', timeout=1.0)
    elapsed = time.monotonic() - started
    assert result.error.type == "TimeoutError"
    assert result.error.message == "the program ran longer than the 1 s time limit (raise it with --timeout)"
    assert result.stdout == "working\n"  # printed before the last tool call: kept
    assert elapsed < 10  # 1 s, plus starting the child on a loaded machine
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_sandbox_that_cannot_boot_is_backend_unavailable(run_on, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SANDBOX_BOOT_ERROR", "No Hypervisor was found for Sandbox")
    with pytest.raises(BackendUnavailable) as caught:
        run_on("fake", "1")
    assert caught.value.exit_code == 3
    assert "No Hypervisor was found for Sandbox" in str(caught.value) and "Fix:" in str(caught.value)


@pytest.mark.parametrize("trap, kind, start", [
    ("guest trapped: out of memory", "MemoryError", "the program used more than the 256 MiB memory limit"),
    ("guest trapped: unreachable", "RuntimeError", "the sandbox stopped: RuntimeError: guest trapped: unreachable"),
])
def test_a_trapped_guest_is_the_programs_error(trap: str, kind: str, start: str, run_on,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SANDBOX_RUN_ERROR", trap)
    result = run_on("fake", "1")
    assert result.error.type == kind and result.error.message.startswith(start)


def test_probe_runs_print_6_times_7(monkeypatch: pytest.MonkeyPatch) -> None:
    assert probe_sandbox(5.0, backend=fake_backend()) is None
    monkeypatch.setenv("FAKE_SANDBOX_BOOT_ERROR", "failed to load Wasm runtime: Unknown KVM VCPU exit")
    assert probe_sandbox(5.0, backend=fake_backend()) == \
        "RuntimeError: Failed to create sandbox: failed to load Wasm runtime: Unknown KVM VCPU exit"


def test_missing_sandbox_library_is_reported_as_unavailable() -> None:
    backend = HyperlightBackend(factory="no_such_module_here:Sandbox")
    program = Program(code="1", tools={}, stubs="", limits=Limits(timeout=5), call_tool=lambda *_a: None,
                      on_print=lambda _text: None)
    with pytest.raises(BackendUnavailable, match="No module named 'no_such_module_here'") as caught:
        backend.execute(program)
    assert 'pip install "hyperlight-sandbox[wasm,python-guest]==0.8.0"' in str(caught.value)


# --- the pieces ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("code, expected", [
    ("1 + 1", "__codeact_value__ = (1 + 1)"),
    ("x = 1\nx", "x = 1\n__codeact_value__ = (x)"),
    ("x = 1; x  # the answer\n", "x = 1; __codeact_value__ = (x)  # the answer\n"),
    ("s = 'é😀'; len(s)\r\n", "s = 'é😀'; __codeact_value__ = (len(s))\r\n"),
    ("f(\n  a=1,\n)\n", "__codeact_value__ = (f(\n  a=1,\n))\n"),
    ("x = 1\n", "x = 1\n"),
    ("", ""),
])
def test_last_expression_is_captured_in_place(code: str, expected: str) -> None:
    rewritten, has_value = rewrite_last_expression(code)
    assert rewritten == expected
    assert has_value == (expected != code)
    assert len(rewritten.splitlines()) == len(code.splitlines())
    ast.parse(rewritten)


def test_syntax_error_keeps_the_programs_line() -> None:
    with pytest.raises(ProgramError) as caught:
        rewrite_last_expression("x = 1\n\nif x\n    pass\n")
    assert (caught.value.info.type, caught.value.info.line) == ("SyntaxError", 3)


def _tool(name: str, parameters: dict[str, Any]) -> Tool:
    return Tool(name=name, description=f'{name} """ \\ tool "', parameters=parameters, returns="Any",
                call=lambda **kw: kw)


def test_guest_source_defines_plain_functions_and_namespaces() -> None:
    def view(*, path: str, view_range: list[int] | None = None) -> str:  # noqa: ARG001 - view's signature
        """Read a file."""
        return path

    tools = {
        "view": tool_from_function(view),
        "github.search_issues": _tool("github.search_issues", {"properties": {"query": {}}}),
        "odd": _tool("odd", {"properties": {"from": {}, "x-y": {}}}),
        "open_ended": _tool("open_ended", {"properties": {"a": {}}, "additionalProperties": True}),
        "codeact_finish": _tool("codeact_finish", {"properties": {}}),
    }
    names = registration_names(tools)
    assert names == {"view": "view", "github.search_issues": "codeact_tool_1", "odd": "odd",
                     "open_ended": "open_ended", "codeact_finish": "codeact_tool_4"}
    source = guest_source("view(path='a')", False, tools, names, Limits())
    compile(source, "<guest>", "exec")
    assert "def view(*_positional, path=_UNSET, view_range=_UNSET):" in source
    assert "def odd(*_positional, **_extra):" in source
    assert "def open_ended(*_positional, a=_UNSET, **_extra):" in source
    assert "'github': _Namespace('github', {'search_issues': _tool_1})" in source


def test_guest_calls_travel_as_json_and_errors_come_back_as_builtins() -> None:
    """Run the guest source in plain Python against a recording host, as the fake sandbox does."""
    calls: list[tuple[str, dict[str, Any]]] = []
    finished: list[dict[str, Any]] = []

    def host(name: str, payload: str) -> dict[str, Any]:
        data = json.loads(payload)
        if name == "codeact_finish":
            finished.append(data)
            return {"value": None}
        calls.append((name, data))
        if data["kwargs"].get("path") == "missing":
            return {"error": {"type": "FileNotFoundError", "message": "no such file", "args": ["no such file"]}}
        if data["kwargs"].get("path") == "odd":
            return {"error": {"type": "NotAnException", "message": "boom", "args": ["boom"]}}
        return {"value": {"got": data["kwargs"]}}

    def view(*, path: str, view_range: list[int] | None = None) -> str:  # noqa: ARG001 - view's signature
        return path

    tools = {"view": tool_from_function(view), "srv.ping": _tool("srv.ping", {"properties": {"n": {}}})}
    program = (
        "try:\n    view(path='missing')\nexcept FileNotFoundError as e:\n    print('caught', e)\n"
        "try:\n    view(path='odd')\nexcept RuntimeError as e:\n    print('runtime', e)\n"
        "srv.ping(n=(1, 2)), view(path='a', view_range=[1, 2])\n"
    )
    code, has_value = rewrite_last_expression(program)
    source = guest_source(code, has_value, tools, registration_names(tools), Limits())
    exec(compile(source, "<guest>", "exec"), {"call_tool": lambda name, **kw: host(name, **kw)})
    assert [c[1]["kwargs"] for c in calls] == [{"path": "missing"}, {"path": "odd"}, {"n": [1, 2]},
                                                {"path": "a", "view_range": [1, 2]}]
    assert calls[0][1]["stdout"] == "" and calls[2][0] == "codeact_tool_1"
    (outcome,) = finished
    assert json.loads(outcome["value"]["json"]) == [{"got": {"n": [1, 2]}}, {"got": {"path": "a",
                                                                                      "view_range": [1, 2]}}]


def test_sandbox_sizes_pass_the_librarys_minimums() -> None:
    # Seen with hyperlight-sandbox 0.8.0: the stack/scratch must be at least about min(heap + 1, 68) MiB plus
    # page tables; 4096 MiB of heap needed 76.
    for heap, least in [(25, 26), (64, 65), (67, 68), (256, 68), (1024, 69), (2048, 71), (4096, 76)]:
        assert stack_mib(heap) >= least
    options = sandbox_options(Limits(memory=256 * MiB))
    assert options["heap_size"] == "256Mi" and options["stack_size"] == f"{stack_mib(256)}Mi"


def test_sandbox_uses_the_guests_cached_copy_when_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site" / "python_guest"
    (package / "resources").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "resources" / "python-sandbox.aot").write_bytes(b"aot" * 10)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "python_guest", raising=False)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert sandbox_options(Limits(), env)["module"] == "python_guest.path"  # no copy yet: the package makes one
    copy = tmp_path / "cache" / "hyperlight_sandbox_guests" / "python_guest" / "python-sandbox.aot"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"aot" * 10)
    assert sandbox_options(Limits(), env) == {**sandbox_options(Limits(), env), "module_path": str(copy)}
    assert "module" not in sandbox_options(Limits(), env)
    copy.write_bytes(b"aot")  # a partial or stale copy is not used
    assert sandbox_options(Limits(), env)["module"] == "python_guest.path"


def test_condense_lists_nested_causes_once() -> None:
    assert condense("Failed: A: B: C: B: C: B\nmore") == "Failed: A: B: C"


# --- real hyperlight, where it runs ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CONFORMANCE))
def test_real_hyperlight_matches_monty(name: str, run_on) -> None:
    reason = real_hyperlight_reason()
    if reason:
        pytest.skip(f"hyperlight cannot run here: {reason}")
    code = CONFORMANCE[name]
    assert normalised(run_on("real", code)) == normalised(run_on("monty", code))


def test_real_hyperlight_kills_a_runaway(run_on) -> None:
    reason = real_hyperlight_reason()
    if reason:
        pytest.skip(f"hyperlight cannot run here: {reason}")
    started = time.monotonic()
    result = run_on("real", "while True:\n    pass\n", timeout=2.0)
    assert result.error.type == "TimeoutError" and time.monotonic() - started < 8


def test_namespaced_tools_match_monty(run_on) -> None:
    """MCP tools are called as ``server.tool(**kw)`` on both backends, and dispatched by their dotted name."""
    def echo(*, text: str, times: int = 1) -> str:
        """Echo text."""
        if times < 0:
            raise ValueError("times must be >= 0")
        return text * times

    tool = tool_from_function(echo, name="srv.echo", source="mcp")
    code = ('print(srv.echo(text="ab", times=2))\n'
            "try:\n    srv.echo(text='x', times=-1)\nexcept ValueError as exc:\n    print('refused:', exc)\n"
            'srv.echo(text="z")\n')
    expected = normalised(run_on("monty", code, tools={"srv.echo": tool}))
    got = normalised(run_on("fake", code, tools={"srv.echo": tool}))
    assert got == expected
    assert got["stdout"] == "abab\nrefused: times must be >= 0\n" and got["result"] == "z"
