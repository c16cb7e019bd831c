"""The oracle of exclusive mode: every command the hook allows, run under `bash -x`, executes the launcher exactly
once with a subcommand the model may run, and no other process except the one `git rev-parse --show-toplevel` of the
root-anchored form. Checked on every listed allowed form and on generated commands built from shell metacharacters."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeact.enforcement import spec
from tests.hook.helpers import LAUNCHER, ROOTED, bash_call, hook_env, run_sh
from tests.hook.test_hook_exclusive import ALLOWED, ROOT

MARK = "\x01TRACE "
RECORDER = """#!/bin/sh
printf '%s\\n' "$1" >> "$(dirname "$0")/calls.log"
cat >/dev/null
"""


@pytest.fixture(scope="module")
def sandbox(stamped: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of an exclusive-mode stamp whose launcher only records its subcommand."""
    dest = tmp_path_factory.mktemp("oracle") / "project"
    shutil.copytree(stamped(enforcement="exclusive"), dest, symlinks=True)
    launcher = dest / LAUNCHER
    launcher.write_text(RECORDER)
    launcher.chmod(0o755)
    return dest


def executed(repo: Path, command: str) -> tuple[list[str], list[str]]:
    """(the commands bash traced, the subcommands the launcher was called with) for ``command`` run in ``repo``."""
    log = repo / ".codeact/bin/calls.log"
    log.unlink(missing_ok=True)
    # PS4 is set in the script: bash ignores it in the environment when running as root
    script = "PS4=$'\\x01TRACE '\nset -x\n" + command
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], cwd=repo, capture_output=True,
                          text=True, timeout=20, env={"PATH": "/usr/bin:/bin", "HOME": str(repo)},
                          stdin=subprocess.DEVNULL)
    traced = [line.split(MARK, 1)[1] for line in proc.stderr.splitlines() if MARK in line and
              line.lstrip("\x01").startswith("TRACE ")]
    calls = log.read_text().splitlines() if log.exists() else []
    return traced, calls


def assert_one_launcher_call(repo: Path, command: str) -> None:
    traced, calls = executed(repo, command)
    assert len(calls) == 1 and calls[0] in spec.MODEL_SUBCOMMANDS, (command, traced, calls)
    others = [t for t in traced if not t.startswith((LAUNCHER, f"./{LAUNCHER}", f"{repo}/{LAUNCHER}"))]
    assert others in ([], ["git rev-parse --show-toplevel"]), (command, traced)
    if others:
        assert command.startswith(ROOTED)


def allowed(repo: Path, command: str, state: Path) -> bool:
    result = run_sh(repo, bash_call(command), hook_env(state, "exclusive"))
    assert result.rc == 0
    return result.out == ""


@pytest.mark.parametrize("command", ALLOWED)
def test_every_allowed_form_runs_the_launcher_once(command: str, sandbox: Path, tmp_path: Path) -> None:
    command = command.replace(ROOT, str(sandbox))
    assert allowed(sandbox, command, tmp_path)
    assert_one_launcher_call(sandbox, command)


COUNTER_EXAMPLES = [f"{LAUNCHER} run --code 'x'; id", f"{LAUNCHER} run --code 'x' && id",
                    f"{LAUNCHER} run --code 'x'\nid", f'{LAUNCHER} run --code "$(id)"',
                    f"{LAUNCHER} run - <<'PY'\nx\nPY\nid\nPY", f"{LAUNCHER} run - <<PY\n$(id)\nPY"]


@pytest.mark.parametrize("command", COUNTER_EXAMPLES)
def test_the_oracle_catches_what_the_hook_denies(command: str, sandbox: Path, tmp_path: Path) -> None:
    """The oracle can fail: these commands run a second process, and the hook denies each."""
    assert not allowed(sandbox, command, tmp_path)
    with pytest.raises(AssertionError):
        assert_one_launcher_call(sandbox, command)


PIECES = ["'", '"', "$", "`", "\\", ";", "|", "&", "\n", "(", ")", "<", ">", "PY", " ", "x", "!", "#", "*", "~",
          "{", "}", "'@", "\t", "$(id)", "\nPY\n", "2>&1", "\r", "\x0b", "\x0c"]
OPTIONS = ["", " --json", " --timeout 5", " --workspace src", " --file src/prog.py", " --backend monty", " --works .",
           " --workspace .git", " --timeout 9999", " --workspace=src"]
body = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@st.composite
def commands(draw: st.DrawFn) -> str:
    launcher = draw(st.sampled_from([LAUNCHER, ROOTED, f"./{LAUNCHER}", f"bash {LAUNCHER}", f"\r{LAUNCHER}",
                                     f"\x0b{ROOTED}"]))
    sub = draw(st.sampled_from(["run", "tools", "doctor", "describe grep", "search x", "uninstall", "discover"]))
    opts = "".join(draw(st.lists(st.sampled_from(OPTIONS), max_size=3)))
    text = draw(body)
    shape = draw(st.sampled_from(["single", "double", "heredoc", "bare"]))
    program = {"single": f" --code '{text}'", "double": f' --code "{text}"', "heredoc": f" - <<'PY'\n{text}\nPY",
               "bare": text}[shape]
    return f"{launcher} {sub}{opts}{program}{draw(st.sampled_from(['', ' 2>&1', draw(body)]))}"


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands())
def test_generated_commands_that_are_allowed_run_the_launcher_once(command: str, sandbox: Path,
                                                                    tmp_path: Path) -> None:
    if allowed(sandbox, command, tmp_path):
        assert_one_launcher_call(sandbox, command)
