"""Properties over generated input: `off` never prints and never fails; no mode ever exits non-zero (the CLI would
deny the call); whatever a mode prints is exactly one valid deny object."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hook.helpers import LAUNCHER, hook_env, run_sh

TOOLS = ["bash", "Bash", "powershell", "view", "Read", "glob", "grep", "edit", "create", "report_intent", "skill",
         "web_fetch", "task", "write_bash", "sql", "x"]
SHELL_BITS = [LAUNCHER, f"./{LAUNCHER}", "bash", " ", "\n", "\t", "'", '"', "\\", ";", "&&", "||", "|", "&", "$(", ")",
              "`", "<<", "<<'PY'", "<<-", "PY", "<<<", ">", "<", "2>&1", "--workspace", "--file", "=", "/", "..", "run",
              "--code", "-", "print(1)", "@'", "'@", "CODEACT_TOOLS=x", "export", "#", "~", "*", "{", "}", "!", "\u2019"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8)
commands = st.lists(st.sampled_from(SHELL_BITS) | st.text(max_size=6), max_size=12).map("".join)


@st.composite
def payloads(draw: Any) -> bytes:
    kind = draw(st.sampled_from(["call", "call", "call", "json", "text", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    camel = draw(st.booleans())
    tool = draw(st.sampled_from(TOOLS) | st.text(max_size=12))
    args: Any = {"command": draw(commands)} if draw(st.booleans()) else draw(json_values)
    if draw(st.booleans()):
        args = json.dumps(args)
    body: dict[str, Any] = {("sessionId" if camel else "session_id"): draw(st.text(max_size=12)),
                            ("toolName" if camel else "tool_name"): tool,
                            ("toolArgs" if camel else "tool_input"): args}
    if draw(st.booleans()):
        body = dict(reversed(list(body.items())))
    return json.dumps(body, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def repo(stamped: Callable[..., Path]) -> Path:
    return stamped(enforcement="exclusive")


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@SETTINGS
@given(stdin=payloads())
def test_off_never_prints_and_never_fails(stdin: bytes, repo: Path, state_dir: Path) -> None:
    result = run_sh(repo, stdin, hook_env(state_dir, "off"))
    assert (result.rc, result.out, result.err) == (0, "", "")


@pytest.mark.parametrize("mode", ["nudge", "exclusive", "bogus"])
@SETTINGS
@given(stdin=payloads())
def test_no_mode_fails_and_any_output_is_one_deny(mode: str, stdin: bytes, repo: Path, state_dir: Path) -> None:
    result = run_sh(repo, stdin, hook_env(state_dir, mode))
    assert result.rc == 0
    assert result.err == ""
    if result.out:
        assert result.out.endswith("}\n") and result.out.count("\n") == 1
        decision = json.loads(result.out)
        assert list(decision) == ["permissionDecision", "permissionDecisionReason", "hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny"
        assert result.reason  # the same decision in VS Code's shape (Result.reason checks it)
        assert len(decision["permissionDecisionReason"]) <= 640


@SETTINGS
@given(command=commands)
def test_exclusive_never_fails_on_any_command(command: str, repo: Path, state_dir: Path) -> None:
    for tool in ("bash", "powershell"):
        stdin = json.dumps({"sessionId": "p", "toolName": tool, "toolArgs": {"command": command}})
        result = run_sh(repo, stdin, hook_env(state_dir, "exclusive"))
        assert result.rc == 0 and result.err == ""
        assert result.out == "" or json.loads(result.out)["permissionDecision"] == "deny"
