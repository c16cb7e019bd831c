"""The bash hook, fed real payload shapes (both casings, object and string arguments, missing fields, garbage, empty
stdin, 1 MB): exit code and EXACT stdout in every mode. One call per case, in a fresh state folder."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hook.helpers import (
    ALL_TOOLS,
    LAUNCHER,
    WHY_NO_COMMAND,
    WHY_NOT_LAUNCHER,
    WHY_TOO_LONG,
    WHY_TWO_COMMANDS,
    WHY_TWO_TOOLS,
    bash_call,
    deny_json,
    hook_env,
    payload,
    reason_command,
    reason_tool_off,
    run_sh,
)

LAUNCH = f"{LAUNCHER} run --code 'print(1)'"
ALLOW = ""
BIG_TEXT = "line \"quoted\" \\ back\n" * 50_000  # ~1 MB once JSON-escaped


def excl(reason: str) -> dict[str, str]:
    """Allowed in off and nudge (a single call), denied with ``reason`` in exclusive."""
    return {"off": ALLOW, "nudge": ALLOW, "exclusive": deny_json(reason)}


ALL_ALLOW = {"off": ALLOW, "nudge": ALLOW, "exclusive": ALLOW}

CASES: dict[str, tuple[str | bytes, dict[str, str]]] = {
    # file tools, both casings
    "view, camelCase": (payload("view", {"path": "README.md"}), excl(reason_tool_off("view"))),
    "view, args as a JSON string": (payload("view", {"path": "README.md"}, args_as_string=True),
                                    excl(reason_tool_off("view"))),
    "Read, Claude shape": (payload("Read", {"file_path": "README.md"}, shape="claude"),
                           excl(reason_tool_off("Read"))),
    "edit": (payload("edit", {"path": "a", "old_str": "x", "new_str": "y"}), excl(reason_tool_off("edit"))),
    "web_fetch": (payload("web_fetch", {"url": "https://example.invalid"}), excl(reason_tool_off("web_fetch"))),
    "an MCP tool": (payload("github-mcp-server-get_file_contents", {"path": "x"}),
                    excl(reason_tool_off("github-mcp-server-get_file_contents"))),
    "write_bash": (payload("write_bash", {"sessionId": "1", "input": "rm -rf ~\n"}),
                   excl(reason_tool_off("write_bash"))),
    "task": (payload("task", {"prompt": "read everything"}), excl(reason_tool_off("task"))),
    "sql": (payload("sql", {"query": "ATTACH '/etc/x' AS x"}), excl(reason_tool_off("sql"))),
    "a tool name with quotes": (payload('a"b', {}), excl(reason_tool_off("ab"))),
    "an escaped tool name": (payload("view", {"path": "a"}).replace('"view"', '"vi\\u0065w"'),
                             excl(reason_tool_off("view"))),
    "pretty-printed JSON": (json.dumps(json.loads(payload("view", {"path": "a"})), indent=2),
                            excl(reason_tool_off("view"))),
    # the launcher, every shape
    "bash launcher, object args": (bash_call(LAUNCH), ALL_ALLOW),
    "bash launcher, string args": (bash_call(LAUNCH, args_as_string=True), ALL_ALLOW),
    "Bash launcher, Claude shape": (payload("Bash", {"command": LAUNCH}, shape="claude"), ALL_ALLOW),
    "Bash launcher, Claude shape, string args": (payload("Bash", {"command": LAUNCH}, shape="claude",
                                                         args_as_string=True), ALL_ALLOW),
    "bash launcher, no session id": (bash_call(LAUNCH, session=None), ALL_ALLOW),
    "bash cat": (bash_call("cat README.md"), excl(reason_command(WHY_NOT_LAUNCHER))),
    "Bash cat, Claude shape": (payload("Bash", {"command": "cat README.md"}, shape="claude"),
                               excl(reason_command(WHY_NOT_LAUNCHER))),
    # housekeeping
    "report_intent": (payload("report_intent", {"intent": "Exploring"}), ALL_ALLOW),
    "update_todo": (payload("update_todo", {"todos": "- [ ] a"}), ALL_ALLOW),
    "skill": (payload("skill", {"skill": "codeact"}), ALL_ALLOW),
    "read_bash": (payload("read_bash", {"sessionId": "1"}), ALL_ALLOW),
    "TodoWrite, Claude shape": (payload("TodoWrite", {"todos": []}, shape="claude"), ALL_ALLOW),
    # missing or odd fields
    "view without session id": (payload("view", {"path": "a"}, session=None), excl(reason_tool_off("view"))),
    "bash without arguments": (payload("bash"), excl(reason_command(WHY_NO_COMMAND))),
    "bash with null arguments": (payload("bash").replace("}", ',"toolArgs":null}'),
                                 excl(reason_command(WHY_NO_COMMAND))),
    "bash with a non-string command": (payload("bash", {"command": ["ls"]}), excl(reason_command(WHY_NO_COMMAND))),
    "no tool name": ('{"sessionId":"s","toolArgs":{"command":"rm -rf ~"}}', ALL_ALLOW),
    "a numeric tool name": ('{"sessionId":"s","toolName":7}', ALL_ALLOW),
    # ambiguous: the arguments hold keys named like the fields the hook reads
    "nested toolName after": (payload("bash", {"x": {"toolName": "view"}, "command": LAUNCH}),
                              excl(reason_command(WHY_TWO_TOOLS))),
    "nested toolName before": ('{"toolArgs":{"x":{"toolName":"bash"},"command":"' + LAUNCH +
                               '"},"toolName":"view"}', excl(reason_command(WHY_TWO_TOOLS))),
    "nested housekeeping name before": ('{"toolArgs":{"x":{"toolName":"report_intent"}},"toolName":"view"}',
                                        excl(reason_command(WHY_TWO_TOOLS))),
    "two command fields": (payload("bash", {"x": {"command": LAUNCH}, "command": "rm -rf ~"}),
                           excl(reason_command(WHY_TWO_COMMANDS))),
    # garbage
    "empty stdin": ("", ALL_ALLOW),
    "whitespace": ("  \n\t", ALL_ALLOW),
    "not JSON": ("hello world", ALL_ALLOW),
    "a JSON array": ("[1, 2, 3]", ALL_ALLOW),
    "truncated JSON": ('{"sessionId":"s","toolName":"vi', ALL_ALLOW),
    "binary bytes": (bytes(range(256)) * 4, ALL_ALLOW),
    "NUL bytes around a call": (b"\0\0" + payload("view", {"path": "a"}).encode() + b"\0",
                                excl(reason_tool_off("view"))),
    # 1 MB
    "1 MB create": (payload("create", {"path": "big.txt", "file_text": BIG_TEXT}), excl(reason_tool_off("create"))),
    "1 MB bash command": (bash_call(f"{LAUNCHER} run --code '{BIG_TEXT}'"), excl(reason_command(WHY_TOO_LONG))),
}


@pytest.mark.parametrize("mode", ["off", "nudge", "exclusive"])
@pytest.mark.parametrize("case", list(CASES))
def test_payload(case: str, mode: str, stamped: Callable[..., Path], state: Path) -> None:
    stdin, expected = CASES[case]
    result = run_sh(stamped(enforcement="exclusive"), stdin, hook_env(state, mode))
    assert result.rc == 0, result.err
    assert result.out == expected[mode]
    if result.out:
        assert json.loads(result.out)["permissionDecision"] == "deny"


@pytest.mark.parametrize("stamped_mode", ["off", "nudge", "exclusive"])
def test_the_stamped_mode_applies_without_codeact_mode(stamped_mode: str, stamped: Callable[..., Path],
                                                       state: Path) -> None:
    repo = stamped(enforcement=stamped_mode)
    result = run_sh(repo, payload("view", {"path": "a"}), hook_env(state))
    assert (result.rc, result.out) == (0, deny_json(reason_tool_off("view")) if stamped_mode == "exclusive" else "")
    assert f"stamped_mode='{stamped_mode}'" in (repo / ".codeact/hooks/pre-tool-use.sh").read_text()


@pytest.mark.parametrize("value", ["", "off"])
def test_codeact_mode_overrides_the_stamped_mode(value: str, stamped: Callable[..., Path], state: Path) -> None:
    result = run_sh(stamped(enforcement="exclusive"), payload("view", {"path": "a"}), hook_env(state, value))
    expected = deny_json(reason_tool_off("view")) if value == "" else ""  # empty: the stamped answer
    assert (result.rc, result.out) == (0, expected)


@pytest.mark.parametrize("mode", ["bogus", "EXCLUSIVE", "exclusive ", "nudge\n"])
def test_an_unknown_mode_allows(mode: str, stamped: Callable[..., Path], state: Path) -> None:
    result = run_sh(stamped(enforcement="exclusive"), payload("view", {"path": "a"}), hook_env(state, mode))
    assert (result.rc, result.out, result.err) == (0, "", "")


def test_the_tool_list_in_the_reason_is_the_stamped_one(stamped: Callable[..., Path], state: Path) -> None:
    tools = ALL_TOOLS
    repo = stamped(enforcement="exclusive", tools=tools)
    result = run_sh(repo, payload("glob", {"pattern": "*"}), hook_env(state))
    assert result.out == deny_json(reason_tool_off("glob", tools))


@pytest.mark.usefixtures("state")
def test_off_exits_before_parsing_the_rest(stamped: Callable[..., Path]) -> None:
    """In off mode the hook stops right after reading stdin: a syntax error further down is never reached."""
    repo = stamped(enforcement="off")
    text = (repo / ".codeact/hooks/pre-tool-use.sh").read_text()
    first_exit = text.index("[[ $mode == nudge || $mode == exclusive ]] || exit 0")
    assert text.index("debug() {") > first_exit
