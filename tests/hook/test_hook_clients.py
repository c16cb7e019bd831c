"""Issue 43.1: every client that reads `.github/hooks/*.json` gets the same enforcement from the one spec.

Payload fixtures per client (fixtures/client_payloads.json: captured from the CLI 1.0.102; the cloud agent's and
VS Code's from GitHub's hooks reference, VS Code's documentation and its Copilot extension's source). Each client runs
the hooks file's `bash` entry its own way: the CLI and the cloud agent under `bash -c`, VS Code under `/bin/sh -c`
(Node's spawn with shell: true), all in the repository root. Each mode does what it does in the CLI: the terminal
tool runs the launcher in the same exact forms, every file, search, web and MCP tool is denied in exclusive mode
with the CodeAct pointer, nudge counts that client's read-only tools, and the session note and the nudge pointer
come in every shape the clients read (spec.OUTPUT). VS Code itself cannot run here: its side is built from its
documentation and source (docs/enforcement.md says so).
"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeact.enforcement import spec
from tests.hook.helpers import CLI_BASH, DEFAULT_TOOLS, Result, hook_env, reason_command, reason_nudge, reason_tool_off

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "client_payloads.json").read_text())
CLIENTS = [name for name in FIXTURES if not name.startswith("_")]
SHELLS = {"cli": CLI_BASH, "cloud-agent": CLI_BASH, "vscode": ["/bin/sh", "-c"], "vscode-docs": ["/bin/sh", "-c"]}
EVENT_NAMES = {"preToolUse": "PreToolUse", "sessionStart": "SessionStart", "postToolUse": "PostToolUse"}


def fill(value: Any, **values: Any) -> Any:
    """A fixture with its {placeholders} filled in (a whole-string placeholder takes any JSON value)."""
    if isinstance(value, dict):
        return {k: fill(v, **values) for k, v in value.items()}
    if isinstance(value, str):
        if value.startswith("{") and value.endswith("}") and value[1:-1] in values:
            return values[value[1:-1]]
        for key, val in values.items():
            if isinstance(val, str):
                value = value.replace("{" + key + "}", val)
    return value


def event_payload(client: str, event: str, repo: Path, tool: str = "", args: Any = None, session: str = "c-1") -> str:
    return json.dumps(fill(FIXTURES[client][event], cwd=str(repo), session=session, tool=tool, args=args or {}))


def terminal(client: str, repo: Path, command: str) -> str:
    fixture = FIXTURES[client]
    args = {fixture["command_key"]: command, **fixture.get("terminal_extra", {"description": "run it"})}
    return event_payload(client, "preToolUse", repo, fixture["terminal"], args)


def read_call(client: str, repo: Path) -> str:
    fixture = FIXTURES[client]
    args = fill(fixture.get("read_args", {"path": "{cwd}/README.md"}), cwd=str(repo))
    return event_payload(client, "preToolUse", repo, fixture["tools"]["read"][0], args)


def run_entry(client: str, repo: Path, event: str, stdin: str, env: dict[str, str]) -> Result:
    config = json.loads((repo / ".github/hooks/codeact.json").read_text())
    entry = config["hooks"][event][0]["bash"]
    proc = subprocess.run(SHELLS[client] + [entry], cwd=repo, input=stdin.encode(), env=env, capture_output=True,
                          timeout=20)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def context_of(result: Result, event: str) -> str:
    """The context a hook printed, checked to be the same in the CLI's shape and in VS Code's."""
    assert (result.rc, result.err) == (0, ""), result.err
    out = json.loads(result.out)
    assert out["hookSpecificOutput"] == {"hookEventName": EVENT_NAMES[event], "additionalContext":
                                         out["additionalContext"]}, out
    return str(out["additionalContext"])


@pytest.fixture(scope="module")
def repo(stamped: Callable[..., Path]) -> Path:
    return stamped(enforcement="exclusive")


LAUNCHER = ".codeact/bin/codeact"
ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'


@pytest.mark.parametrize("client", CLIENTS)
def test_exclusive_the_terminal_tool_runs_the_launcher_in_every_form(client: str, repo: Path, state: Path) -> None:
    env = hook_env(state)
    for command in (f"{LAUNCHER} run --code 'print(1)'", f"./{LAUNCHER} run --code 'print(1)'",
                    f"{repo}/{LAUNCHER} run --code 'print(1)'", f"{ROOTED} tools",
                    f"{LAUNCHER} run - <<'PY'\nprint(1)\nPY"):
        result = run_entry(client, repo, "preToolUse", terminal(client, repo, command), env)
        assert (result.rc, result.out, result.err) == (0, "", ""), (command, result)
    denied = run_entry(client, repo, "preToolUse", terminal(client, repo, "cat README.md"), env)
    assert denied.reason == reason_command(spec.WHY_TEXT["not_launcher"])  # both shapes, one reason


@pytest.mark.parametrize("client", CLIENTS)
def test_exclusive_denies_every_file_search_web_and_mcp_tool(client: str, repo: Path, state: Path) -> None:
    env = hook_env(state)
    tools = FIXTURES[client]["tools"]
    for kind in ("read", "write", "web", "mcp"):
        for tool in tools[kind]:
            result = run_entry(client, repo, "preToolUse", event_payload(client, "preToolUse", repo, tool,
                                                                         {"filePath": "a"}), env)
            assert result.reason == reason_tool_off(tool[:40]), (client, tool)
    for tool in tools["housekeeping"]:
        result = run_entry(client, repo, "preToolUse", event_payload(client, "preToolUse", repo, tool, {}), env)
        assert (result.rc, result.out) == (0, ""), (client, tool, result.out)


@pytest.mark.parametrize("client", CLIENTS)
def test_nudge_counts_the_clients_reads_and_points_after_the_third(client: str, repo: Path, state: Path) -> None:
    env = hook_env(state, "nudge")
    read = read_call(client, repo)
    for _ in range(2):
        assert run_entry(client, repo, "preToolUse", read, env).out == ""
    assert run_entry(client, repo, "preToolUse", terminal(client, repo, "ls"), env).out == ""  # breaks the run
    for _ in range(3):
        assert run_entry(client, repo, "preToolUse", read, env).out == ""
    fourth = run_entry(client, repo, "preToolUse", read, env)
    assert fourth.reason == reason_nudge(), client
    for _ in range(3):
        assert run_entry(client, repo, "preToolUse", read, env).out == ""
    tool = FIXTURES[client]["tools"]["read"][0]
    post = run_entry(client, repo, "postToolUse", event_payload(client, "postToolUse", repo, tool, {}), env)
    pointer = context_of(post, "postToolUse")
    assert pointer.startswith(spec.POINTER.split("\n")[0]), pointer
    assert run_entry(client, repo, "preToolUse", read, env).out == ""  # the model had the pointer


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("mode", ["nudge", "exclusive"])
def test_the_session_note_comes_in_every_shape(client: str, mode: str, repo: Path, state: Path) -> None:
    env = hook_env(state, mode, {"CODEACT_VENV": str(state)})
    note = context_of(run_entry(client, repo, "sessionStart", event_payload(client, "sessionStart", repo), env),
                      "sessionStart")
    assert note == spec.SESSION[mode].replace("{launcher}", LAUNCHER) + spec.SESSION_FRESH, note  # no venv here


@pytest.mark.parametrize("client", CLIENTS)
def test_off_says_and_denies_nothing(client: str, repo: Path, state: Path) -> None:
    env = hook_env(state, "off")
    for event, stdin in (("sessionStart", event_payload(client, "sessionStart", repo)),
                         ("preToolUse", read_call(client, repo)),
                         ("preToolUse", terminal(client, repo, "cat README.md"))):
        assert run_entry(client, repo, event, stdin, env) == Result(0, "", ""), (client, event)


def test_the_fixtures_name_tools_the_spec_classifies() -> None:
    """Every read tool of a fixture counts in nudge mode, every housekeeping tool passes, none of the others does."""
    for client in CLIENTS:
        tools = FIXTURES[client]["tools"]
        assert set(tools["read"]) <= set(spec.READ_TOOLS), client
        assert set(tools["housekeeping"]) <= set(spec.HOUSEKEEPING_TOOLS), client
        others = set(tools["write"]) | set(tools["web"]) | set(tools["mcp"])
        assert not others & (set(spec.READ_TOOLS) | set(spec.HOUSEKEEPING_TOOLS) | set(spec.SHELL_TOOLS)), client
        assert FIXTURES[client]["terminal"] in set(spec.SHELL_TOOLS) | set(spec.TERMINAL_TOOLS)
    assert DEFAULT_TOOLS  # the reasons above list the stamped default tools


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_a_user_install_entry_run_by_sh_without_its_script_allows(scope: str, stamped: Callable[..., Path],
                                                                  state: Path) -> None:
    """VS Code runs the `bash` entry with /bin/sh (dash here), where a `.` of a missing file exits 2, which VS Code
    takes as a deny of every tool; it sets neither COPILOT_HOOK_DIR nor COPILOT_PLUGIN_ROOT (its docs name none)."""
    answers = {"scope": scope, "enforcement": "exclusive"} | ({"plugin_owner": "Acme"} if scope == "plugin" else {})
    project = stamped(**answers)
    hooks = project / ("hooks/codeact.json" if scope == "global" else "plugins/codeact/hooks.json")
    config = json.loads(hooks.read_text())
    config = config.get("hooks", config)
    for event in ("preToolUse", "sessionStart", "postToolUse"):
        entry = config[event][0]["bash"]
        proc = subprocess.run(["/bin/sh", "-c", entry], cwd=state, input=b"{}", env=hook_env(state),
                              capture_output=True, timeout=20)
        assert (proc.returncode, proc.stdout) == (0, b""), (event, proc)
