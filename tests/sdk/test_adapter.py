"""The SDK adapter (`<codeact_dir>/sdk/codeact-hooks.mjs`) without the SDK: it runs the stamped hook exactly as the
Copilot CLI runs the hooks-file entry (payload, environment, fail-safe) and hands back the hook's decision.

The fake-hook tests copy a stamped adapter into a folder laid out like an install, next to a probe hook script that
records what it was given and behaves as told (FAKE_MODE). The parity test runs the REAL stamped hook both ways.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.conftest import ADAPTER, CODEACT_DIR, Install

Call = Callable[..., dict[str, Any]]
TS = 1795988347236
# A hook that records its stdin, cwd and environment under $FAKE_LOG, then does what $FAKE_MODE says.
FAKE_HOOK = r"""
cat >"$FAKE_LOG/stdin"
pwd -P >"$FAKE_LOG/cwd"
env >"$FAKE_LOG/env"
case ${FAKE_MODE:-} in
  exit1) exit 1 ;;
  exit2) echo "boom: cannot parse" >&2; exit 2 ;;
  signal) kill -9 $$ ;;
  sleep) sleep 20 ;;
  garbage) echo "this is not JSON" ;;
  deny) printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\n' "no, because" ;;
  ask) printf '{"permissionDecision":"ask","permissionDecisionReason":"%s"}\n' "ask the user" ;;
  modify) printf '{"permissionDecision":"allow","modifiedArgs":{"path":"other.md"}}\n' ;;
  unknown) printf '{"permissionDecision":"maybe"}\n' ;;
esac
exit 0
"""


def view_input(cwd: Path, **extra: Any) -> dict[str, Any]:
    return {"sessionId": "sdk-session-1", "timestamp": TS, "workingDirectory": str(cwd), "toolName": "view",
            "toolArgs": {"path": "README.md", "view_range": [1, 2]}, **extra}


def fake_install(tmp_path: Path, stamped: dict[str, Install], scope: str, hook: str | None = FAKE_HOOK) -> Path:
    """A folder laid out like a ``scope`` install (the stamped adapter, a probe hook); returns its codeact_dir."""
    project = tmp_path / f"fake-{scope}"
    install = project / CODEACT_DIR[scope]
    (install / "sdk").mkdir(parents=True)
    (install / "hooks").mkdir()
    shutil.copy(stamped[scope].install / ADAPTER, install / ADAPTER)
    if hook is not None:
        (install / "hooks/pre-tool-use.sh").write_text(hook)
    return install.resolve()


def seen(log: Path) -> tuple[dict[str, Any], str, dict[str, str]]:
    """(payload, cwd, environment) the probe hook was run with."""
    env = dict(line.split("=", 1) for line in (log / "env").read_text().splitlines() if "=" in line)
    return json.loads((log / "stdin").read_text()), (log / "cwd").read_text().strip(), env


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log"
    path.mkdir()
    return path


def root_of(scope: str, install: Path, tmp_path: Path) -> Path:
    """The repository a session works in: the install's own in repo scope, a separate one otherwise."""
    if scope == "repo":
        return install.parent
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work.resolve()


@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_the_hook_gets_the_payload_the_cli_sends(scope: str, stamped_installs: dict[str, Install], call_adapter: Call,
                                                 tmp_path: Path, log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, scope)
    root = root_of(scope, install, tmp_path)
    out = call_adapter(install / ADAPTER, {"scope": scope, "root": str(root)}, [view_input(root)],
                       env={"FAKE_LOG": str(log)})
    assert out["decisions"] == [None]
    payload, _cwd, _env = seen(log)
    # camelCase, toolArgs an object, timestamp in milliseconds, the SDK's workingDirectory sent back as cwd.
    assert payload == {"sessionId": "sdk-session-1", "timestamp": TS, "cwd": str(root), "toolName": "view",
                       "toolArgs": {"path": "README.md", "view_range": [1, 2]}}
    assert list(payload) == ["sessionId", "timestamp", "cwd", "toolName", "toolArgs"]


@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_the_hook_runs_where_and_with_what_the_cli_gives_it(scope: str, stamped_installs: dict[str, Install],
                                                            call_adapter: Call, tmp_path: Path, log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, scope)
    root = root_of(scope, install, tmp_path)
    home = tmp_path / "copilot-home"
    call_adapter(install / ADAPTER, {"scope": scope, "root": str(root)}, [view_input(root)],
                 env={"FAKE_LOG": str(log), "COPILOT_HOME": str(home), "CODEACT_MODE": "nudge"})
    _payload, cwd, env = seen(log)
    assert env["CODEACT_MODE"] == "nudge", "the harness's environment reaches the hook (mode override included)"
    if scope == "repo":
        assert cwd == str(root)
    elif scope == "global":
        assert cwd == str(root)
        assert (env["COPILOT_HOME"], env["COPILOT_HOOK_DIR"]) == (str(home), str(home / "hooks"))
        assert env["COPILOT_PROJECT_DIR"] == str(root)
    else:
        assert cwd == str(install)
        for key in ("COPILOT_PLUGIN_ROOT", "PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT"):
            assert env[key] == str(install), key
        assert env["COPILOT_PROJECT_DIR"] == str(root)


def test_global_scope_defaults_to_the_sessions_folder_and_copilot_home(stamped_installs: dict[str, Install],
                                                                       call_adapter: Call, tmp_path: Path,
                                                                       log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "global")
    work = root_of("global", install, tmp_path)
    home = tmp_path / "home"
    call_adapter(install / ADAPTER, {}, [view_input(work)], env={"FAKE_LOG": str(log), "HOME": str(home),
                                                                 "COPILOT_HOME": ""})
    _payload, cwd, env = seen(log)
    assert cwd == str(work) and env["COPILOT_PROJECT_DIR"] == str(work)
    assert env["COPILOT_HOME"] == str(home / ".copilot") and env["COPILOT_HOOK_DIR"] == str(home / ".copilot/hooks")


# (FAKE_MODE, the decision the adapter must hand the SDK; None lets the call through, as the CLI does)
FAIL_SAFE = [
    ("", None),
    ("garbage", None),
    ("unknown", None),
    ("deny", {"permissionDecision": "deny", "permissionDecisionReason": "no, because"}),
    ("ask", {"permissionDecision": "ask", "permissionDecisionReason": "ask the user"}),
    ("modify", {"permissionDecision": "allow", "modifiedArgs": {"path": "other.md"}}),
]


@pytest.mark.parametrize("mode,expected", FAIL_SAFE)
def test_the_hooks_output_becomes_the_decision(mode: str, expected: dict[str, Any] | None,
                                               stamped_installs: dict[str, Install], call_adapter: Call,
                                               tmp_path: Path, log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "repo")
    out = call_adapter(install / ADAPTER, {}, [view_input(install.parent)],
                       env={"FAKE_LOG": str(log), "FAKE_MODE": mode})
    assert out["decisions"] == [expected]


@pytest.mark.parametrize("mode,why", [("exit1", "(exit 1)"), ("exit2", "(exit 2)"), ("signal", "(killed by SIGKILL)")])
@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_a_hook_that_fails_denies(scope: str, mode: str, why: str, stamped_installs: dict[str, Install],
                                  call_adapter: Call, tmp_path: Path, log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, scope)
    root = root_of(scope, install, tmp_path)
    (decision,) = call_adapter(install / ADAPTER, {}, [view_input(root)],
                               env={"FAKE_LOG": str(log), "FAKE_MODE": mode})["decisions"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith(f"CodeAct's preToolUse hook errored {why}, so the call "
                                                           "was not run.")
    if mode == "exit2":
        assert decision["permissionDecisionReason"].endswith("It said: boom: cannot parse")


def test_a_hook_that_hangs_is_killed_and_lets_the_call_through(stamped_installs: dict[str, Install],
                                                               call_adapter: Call, tmp_path: Path, log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "repo")
    start = time.monotonic()
    out = call_adapter(install / ADAPTER, {"timeoutMs": 400}, [view_input(install.parent)],
                       env={"FAKE_LOG": str(log), "FAKE_MODE": "sleep"})
    assert out["decisions"] == [None]
    assert out["seconds"][0] < 5 and time.monotonic() - start < 15, out


@pytest.mark.parametrize("scope,expected", [("repo", "deny"), ("global", None), ("plugin", None)])
def test_a_missing_hook_does_what_the_scopes_hooks_file_does(scope: str, expected: str | None,
                                                             stamped_installs: dict[str, Install], call_adapter: Call,
                                                             tmp_path: Path) -> None:
    # repo: `. .codeact/hooks/pre-tool-use.sh` fails, which denies; global/plugin: the entry ends `|| exit 0`.
    install = fake_install(tmp_path, stamped_installs, scope, hook=None)
    (decision,) = call_adapter(install / ADAPTER, {}, [view_input(root_of(scope, install, tmp_path))])["decisions"]
    assert (decision or {}).get("permissionDecision") == expected, decision
    if expected:
        assert "pre-tool-use.sh" in decision["permissionDecisionReason"], decision


def test_a_hook_that_cannot_start_denies(stamped_installs: dict[str, Install], call_adapter: Call,
                                         tmp_path: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "global")
    (decision,) = call_adapter(install / ADAPTER, {}, [view_input(tmp_path / "no-such-folder")])["decisions"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("CodeAct's preToolUse hook could not start"), decision


def test_odd_input_never_throws(stamped_installs: dict[str, Install], call_adapter: Call, tmp_path: Path,
                                log: Path) -> None:
    # The SDK lets a call through when a handler throws, so the adapter must answer for any input.
    install = fake_install(tmp_path, stamped_installs, "repo")
    out = call_adapter(install / ADAPTER, {}, [None, {"toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"}],
                       env={"FAKE_LOG": str(log), "FAKE_MODE": "deny"})
    assert [d["permissionDecision"] for d in out["decisions"]] == ["deny", "deny"]
    payload, _cwd, _env = seen(log)
    assert payload["toolArgs"] == "{\"command\":\"ls\"}", "a JSON-string toolArgs (older CLIs) is passed as it is"
    assert payload["sessionId"] == "invocation-session", "without an input sessionId, the invocation's"


def test_a_harness_without_bash_is_told_so(stamped_installs: dict[str, Install], call_adapter: Call, tmp_path: Path,
                                           log: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "repo")
    options = {"canRunBash": False}
    denied = call_adapter(install / ADAPTER, options, [view_input(install.parent)],
                          env={"FAKE_LOG": str(log), "FAKE_MODE": "deny"})["decisions"][0]
    assert denied["permissionDecisionReason"] == (
        "no, because This harness gives the model no bash tool, so the CodeAct launcher cannot run here: tell the "
        "user, who can give the session a bash tool or switch CodeAct off (CODEACT_MODE=off).")
    allowed = call_adapter(install / ADAPTER, options, [view_input(install.parent)], env={"FAKE_LOG": str(log)})
    assert allowed["decisions"] == [None]


@pytest.mark.parametrize("options,message", [
    ({"scpoe": "repo"}, "codeactHooks: unknown option(s) scpoe; valid: scope, root, copilotHome, env, timeoutMs, "
                        "canRunBash, platform"),
    ({"scope": "team"}, 'codeactHooks: scope must be one of repo, global, plugin, not "team"'),
    ({"scope": "plugin"}, "belongs to a repo-scope install, not plugin: import the codeact-hooks.mjs of your "
                          "plugin-scope install instead"),
    ({"root": "<elsewhere>"}, "is not the repository this adapter belongs to"),
    ({"root": "<missing>"}, "does not exist"),
    ({"timeoutMs": -1}, "timeoutMs must be a positive number of milliseconds, not -1"),
    ({"canRunBash": "no"}, "canRunBash must be true or false"),
])
def test_bad_options_are_refused_with_the_fix(options: dict[str, Any], message: str,
                                              stamped_installs: dict[str, Install], call_adapter: Call,
                                              tmp_path: Path) -> None:
    install = fake_install(tmp_path, stamped_installs, "repo")
    (tmp_path / "elsewhere").mkdir()
    given = {k: (str(tmp_path / v[1:-1]) if isinstance(v, str) and v.startswith("<") else v)
             for k, v in options.items()}
    out = call_adapter(install / ADAPTER, given, [])
    assert out["error"]["name"] == "CodeactHooksError"
    assert message in out["error"]["message"], out


def test_session_options(stamped_installs: dict[str, Install], call_adapter: Call, node: str) -> None:
    repo = stamped_installs["repo"]
    out = call_adapter(repo.install / ADAPTER, {"root": str(repo.project)}, [])
    assert out == {"decisions": [], "seconds": []}
    request = json.dumps({"adapter": str(repo.install / ADAPTER), "options": {}, "session": True})
    proc = subprocess.run([node, str(Path(__file__).with_name("call_adapter.mjs"))], input=request,
                          capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(proc.stdout)["session"] == {
        "workingDirectory": str(repo.project.resolve()), "enableConfigDiscovery": True, "enableFileHooks": False,
        "hooks": ["onPreToolUse"]}
    request = json.dumps({"adapter": str(repo.install / ADAPTER), "runtimeEnv": {"PATH": "/bin",
                                                                                "CODEACT_MODE": "exclusive"}})
    proc = subprocess.run([node, str(Path(__file__).with_name("call_adapter.mjs"))], input=request,
                          capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(proc.stdout)["runtimeEnv"] == {"PATH": "/bin", "CODEACT_MODE": "off"}


# --- the real stamped hook: the adapter hands the SDK exactly what the CLI would get --------------------------------
def cli_entry(install: Install) -> tuple[str, Path, dict[str, str]]:
    """The hooks-file entry of ``install``, where the CLI runs it, and the variables it adds."""
    if install.scope == "repo":
        hooks_file, cwd, extra = install.project / ".github/hooks/codeact.json", install.project, {}
    elif install.scope == "global":
        assert install.home is not None
        hooks_file, cwd = install.home / "hooks/codeact.json", install.work
        extra = {"COPILOT_HOME": str(install.home), "COPILOT_HOOK_DIR": str(install.home / "hooks"),
                 "COPILOT_PROJECT_DIR": str(install.work)}
    else:
        hooks_file, cwd = install.install / "hooks.json", install.install
        extra = {"COPILOT_PLUGIN_ROOT": str(install.install), "COPILOT_PROJECT_DIR": str(install.work)}
    (entry,) = json.loads(hooks_file.read_text())["hooks"]["preToolUse"]
    return entry["bash"], cwd, extra


LAUNCHER_CALL = {"repo": ".codeact/bin/codeact run --code 'print(1)'",
                 "global": "\"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact\" run --code 'print(1)'",
                 "plugin": "<install>/bin/codeact run --code 'print(1)'"}


@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_decisions_equal_the_clis(scope: str, stamped_installs: dict[str, Install], call_adapter: Call,
                                  tmp_path: Path) -> None:
    from tests.hook.helpers import CLI_BASH, hook_env

    install = stamped_installs[scope]
    launcher = LAUNCHER_CALL[scope].replace("<install>", str(install.install))
    calls = [("view", {"path": "README.md"}), ("bash", {"command": launcher, "description": "run"}),
             ("bash", {"command": "ls -la", "description": "list"}), ("glob", {"pattern": "**/*.py"}),
             ("report_intent", {"intent": "Reading"})]
    entry, cwd, extra = cli_entry(install)
    for mode in ("exclusive", "nudge"):
        cli_state, sdk_state = tmp_path / f"cli-{mode}", tmp_path / f"sdk-{mode}"
        cli_state.mkdir()
        sdk_state.mkdir()
        expected = []
        for tool, args in calls + [("view", {"path": "a"})] * 4:
            payload = json.dumps({"sessionId": f"s-{mode}", "timestamp": TS, "cwd": str(install.work),
                                  "toolName": tool, "toolArgs": args})
            proc = subprocess.run(CLI_BASH + [entry], cwd=cwd, input=payload, capture_output=True, text=True,
                                  env=hook_env(cli_state, mode, extra), timeout=10)
            assert proc.returncode == 0, proc.stderr
            decision = json.loads(proc.stdout) if proc.stdout.strip() else None
            if decision:  # the SDK takes the CLI's top-level fields; VS Code's copy is for VS Code (spec.OUTPUT)
                assert decision.pop("hookSpecificOutput")["permissionDecision"] == decision["permissionDecision"]
            expected.append(decision)
        inputs = [{"sessionId": f"s-{mode}", "timestamp": TS, "workingDirectory": str(install.work),
                   "toolName": tool, "toolArgs": args} for tool, args in calls + [("view", {"path": "a"})] * 4]
        env = hook_env(sdk_state, mode, {"COPILOT_HOME": str(install.home)} if install.home else {})
        got = call_adapter(install.adapter, {"root": str(install.work)}, inputs, env=env)["decisions"]
        assert got == expected, mode
        assert any(d and d["permissionDecision"] == "deny" for d in expected), "the check compares denials too"


def test_windows_runs_the_powershell_hook_as_the_hooks_file_says(stamped_installs: dict[str, Install],
                                                                 call_adapter: Call, tmp_path: Path,
                                                                 log: Path) -> None:
    # No PowerShell here: a probe named `powershell` on PATH records how it was started.
    install = fake_install(tmp_path, stamped_installs, "repo")
    (install / "hooks/pre-tool-use.ps1").write_text("# the stamped .ps1 would be here\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    probe = bin_dir / "powershell"
    probe.write_text('#!/bin/bash\nprintf "%s\\n" "$@" >"$FAKE_LOG/argv"\ncat >"$FAKE_LOG/stdin"\npwd -P >"$FAKE_LOG/cwd"\n'
                     "env >\"$FAKE_LOG/env\"\n")
    probe.chmod(0o755)
    out = call_adapter(install / ADAPTER, {"platform": "win32"}, [view_input(install.parent)],
                       env={"FAKE_LOG": str(log), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert out["decisions"] == [None]
    assert (log / "argv").read_text().splitlines() == [
        "-NoProfile", "-NonInteractive", "-Command",
        "Invoke-Expression (Get-Content -Raw -LiteralPath .codeact/hooks/pre-tool-use.ps1)"]
    payload, cwd, _env = seen(log)
    assert cwd == str(install.parent) and payload["toolName"] == "view"


@pytest.mark.parametrize("scope", list(CODEACT_DIR))
def test_the_adapter_needs_nothing_but_node(scope: str, stamped_installs: dict[str, Install]) -> None:
    import re

    source = (stamped_installs[scope].install / ADAPTER).read_text()
    specifiers = re.findall(r"^import .* from \"([^\"]+)\";$", source, flags=re.M)
    assert specifiers and all(s.startswith("node:") for s in specifiers), specifiers
    assert "import(" not in source and "require(" not in source
    assert f'export const STAMPED_SCOPE = "{scope}";' in source
