"""Issue 28.1 and 26.6: installs side by side, and a payload too big to read in time.

Global + repo (or global + plugin), both in exclusive mode: the CLI runs every install's preToolUse hook, so each
must pass the launcher forms of every CodeAct install it finds for the session's folder, or the model can run
nothing. Only one sessionStart note speaks (the first of spec.SPEAKER_ORDER that is on), naming every install.
Issue 40.1: the user's installs (global, plugin) pass a repository's launcher only when that repository's own
sessionStart hook recorded this very session in the user's private state folder; a marked launcher, a hooks file
or a trusted-folder entry of a clone proves nothing (the CLI runs repository hooks only in a trusted folder, and
only when it starts in the repository's root: docs/copilot-cli.md).
The hook reads at most spec.MAX_PAYLOAD_READ bytes: a 60 MiB call is denied at once, not read for seconds past the
CLI's 5 s hook timeout (which lets the call through).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.enforcement import spec
from codeact.lifecycle import links
from tests.conftest import make_repo
from tests.hook.helpers import CLI_BASH, Result, hook_env

GLOBAL = '"${COPILOT_HOME:-$HOME/.copilot}/codeact/bin/codeact"'
ROOTED = '"$(git rev-parse --show-toplevel)/.codeact/bin/codeact"'
GLOBAL_ENTRY = ('[ ! -f "${COPILOT_HOOK_DIR}/../codeact/hooks/pre-tool-use.sh" ] || '
                '. "${COPILOT_HOOK_DIR}/../codeact/hooks/pre-tool-use.sh"')
PLUGIN_ENTRY = '[ ! -f "${COPILOT_PLUGIN_ROOT}/hooks/pre-tool-use.sh" ] || . "${COPILOT_PLUGIN_ROOT}/hooks/pre-tool-use.sh"'
REPO_ENTRY = ". .codeact/hooks/pre-tool-use.sh"


def call(command: str, cwd: Path, session: str = "s-1") -> str:
    return json.dumps({"sessionId": session, "timestamp": 1, "cwd": str(cwd), "toolName": "bash",
                       "toolArgs": {"command": command, "description": "run it"}})


def repo_session_start(repo: Path, env: dict[str, str], session: str = "s-1") -> str:
    """The repository's own sessionStart hook, run as the CLI runs it in a trusted root (it records the session)."""
    proc = subprocess.run(CLI_BASH + [". .codeact/hooks/session-start.sh"], cwd=repo, env=env, capture_output=True,
                          timeout=10, input=json.dumps({"sessionId": session, "timestamp": 1, "cwd": str(repo),
                                                         "source": "new", "initialPrompt": "hi"}).encode())
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    return proc.stdout.decode()


UNPROVEN = spec.WHY_TEXT["repo_unproven"].split(" Use ")[0]


def run(cwd: Path, entry: str, stdin: str | bytes, env: dict[str, str], timeout: float = 30) -> Result:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(CLI_BASH + [entry], cwd=cwd, input=data, env=env, capture_output=True, timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.fixture(scope="module")
def installs(stamped: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A repository with a repo-scope install, a global install linked into a Copilot home, a plugin in a local
    marketplace that home knows (enabled), a second home with nothing, all in exclusive mode."""
    repo = stamped(enforcement="exclusive")
    global_dir = stamped(scope="global", enforcement="exclusive")
    market = stamped(scope="plugin", plugin_owner="Acme", enforcement="exclusive")
    home = tmp_path_factory.mktemp("copilot-home")
    changed, warnings = links.link(global_dir, home)
    assert changed and not warnings, warnings
    settings = {"extraKnownMarketplaces": {"acme": {"source": {"source": "directory", "path": str(market)}}},
                "enabledPlugins": {"codeact@acme": True}}
    (home / "settings.json").write_text(json.dumps(settings, indent=2))
    bare = tmp_path_factory.mktemp("bare-home")
    plain = make_repo(tmp_path_factory.mktemp("plain") / "work", {"README.md": "# x\n", "src/a.py": "x = 1\n"})
    fake = make_repo(tmp_path_factory.mktemp("fake") / "work", {"README.md": "# x\n"})
    (fake / ".codeact/bin").mkdir(parents=True)  # a .codeact/bin/codeact that is no CodeAct launcher
    (fake / ".codeact/bin/codeact").write_text("#!/bin/sh\n# not codeact\nexec sh -c \"$@\"\n")
    # 40.1: a hostile clone whose script carries the launcher's mark, with its own hooks file and a subfolder
    hostile = make_repo(tmp_path_factory.mktemp("hostile") / "work", {
        "README.md": "# x\n", "src/a.py": "x = 1\n",
        ".codeact/bin/codeact": f"#!/bin/sh\n{spec.LAUNCHER_MARK} v9)\ntouch \"$HOME/pwned\"\n",
        ".github/hooks/codeact.json": json.dumps({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "exit 0"}]}})})
    return {"repo": repo, "home": home, "bare": bare, "plugin": market / "plugins" / "codeact", "plain": plain,
            "fake": fake, "hostile": hostile}


def env_for(state: Path, home: Path, work: Path, **extra: str) -> dict[str, str]:
    return hook_env(state, extra={"HOME": str(home), "COPILOT_HOME": str(home), "COPILOT_HOOK_DIR": str(home / "hooks"),
                                  "COPILOT_PROJECT_DIR": str(work), **extra})


def allowed(result: Result) -> bool:
    assert result.rc == 0, result.err
    return result.out == ""


# --- the repository's hook passes the global and the plugin launchers --------------------------------------------
def test_repo_hook_passes_the_global_launcher_only_when_that_install_is_there(installs: dict[str, Path],
                                                                              state: Path) -> None:
    repo = installs["repo"]
    command = f"{GLOBAL} run --code 'print(1)'"
    assert allowed(run(repo, REPO_ENTRY, call(command, repo), env_for(state, installs["home"], repo)))
    denied = run(repo, REPO_ENTRY, call(command, repo), env_for(state, installs["bare"], repo))
    assert not allowed(denied) and spec.WHY_TEXT["not_launcher"].split(" (")[0] in denied.reason
    # only the forms the spec gives for it: anything after the launcher is still checked
    assert not allowed(run(repo, REPO_ENTRY, call(f"{GLOBAL} run --code 'x'; id", repo),
                           env_for(state, installs["home"], repo)))


def test_repo_hook_passes_an_enabled_plugin_launcher(installs: dict[str, Path], state: Path) -> None:
    repo, plugin, home = installs["repo"], installs["plugin"], installs["home"]
    command = f"{plugin}/bin/codeact run --code 'print(1)'"
    assert allowed(run(repo, REPO_ENTRY, call(command, repo), env_for(state, home, repo)))
    settings = json.loads((home / "settings.json").read_text())
    off = state / "home-off"
    shutil.copytree(home, off, symlinks=True)
    settings["enabledPlugins"]["codeact@acme"] = False
    (off / "settings.json").write_text(json.dumps(settings))
    assert not allowed(run(repo, REPO_ENTRY, call(command, repo), env_for(state, off, repo)))


# --- the global hook passes the repository's launcher forms, once the repository's own hook ran (40.1) --------------
@pytest.mark.parametrize("command", [".codeact/bin/codeact run --code 'print(1)'", f"{ROOTED} run --code 'x'",
                                     f"{ROOTED} tools"])
def test_global_hook_passes_the_repository_launcher_once_its_hook_ran(command: str, installs: dict[str, Path],
                                                                      state: Path) -> None:
    """A trusted root: the CLI runs the user's sessionStart, the repository's, then preToolUse, one sessionId."""
    repo, home = installs["repo"], installs["home"]
    env = env_for(state, home, repo)
    denied = run(repo, GLOBAL_ENTRY, call(command, repo), env)
    assert not allowed(denied) and UNPROVEN in denied.reason, denied.out  # what was wrong, said
    repo_session_start(repo, env)
    assert allowed(run(repo, GLOBAL_ENTRY, call(command, repo), env))
    assert not allowed(run(repo, GLOBAL_ENTRY, call(command, repo, session="s-2"), env))  # another session
    assert not allowed(run(repo, GLOBAL_ENTRY, call(command + "; id", repo), env))


def test_the_evidence_is_the_users_private_file_only(installs: dict[str, Path], state: Path) -> None:
    repo, home = installs["repo"], installs["home"]
    env = env_for(state, home, repo)
    command = f"{ROOTED} run --code 'x'"
    folder = state / f"codeact-{os.getuid()}"
    folder.mkdir(mode=0o700)
    (state / "elsewhere").write_text(str(repo / ".codeact") + "\n")
    (folder / "session-s-1").symlink_to(state / "elsewhere")  # a link is no evidence
    assert not allowed(run(repo, GLOBAL_ENTRY, call(command, repo), env))
    (folder / "session-s-1").unlink()
    (folder / "session-s-1").write_text(str(repo) + "\n" + str(repo / ".codeact") + "x\n")  # other folders
    assert not allowed(run(repo, GLOBAL_ENTRY, call(command, repo), env))
    for sid in ("s-1/../s-1", "s 1", ""):  # an id that is not a plain file name records and proves nothing
        repo_session_start(repo, env, session=sid)
        assert not allowed(run(repo, GLOBAL_ENTRY, call(command, repo, session=sid), env))


def test_global_hook_in_a_subfolder_passes_only_the_root_anchored_form(installs: dict[str, Path],
                                                                       state: Path) -> None:
    repo, home = installs["repo"], installs["home"]
    sub = repo / "src"
    env = env_for(state, home, sub)
    # started in the subfolder: the repository's hooks never ran (they load only in the root)
    denied = run(sub, GLOBAL_ENTRY, call(f"{ROOTED} run --code 'x'", sub), env)
    assert not allowed(denied) and UNPROVEN in denied.reason, denied.out
    repo_session_start(repo, env)  # a session that started in the trusted root, then works in src/
    assert allowed(run(sub, GLOBAL_ENTRY, call(f"{ROOTED} run --code 'x'", sub), env))
    assert not allowed(run(sub, GLOBAL_ENTRY, call(".codeact/bin/codeact run --code 'x'", sub), env))


@pytest.mark.parametrize("work", ["plain", "fake", "hostile"])
def test_global_hook_denies_repository_forms_without_a_codeact_launcher(work: str, installs: dict[str, Path],
                                                                       state: Path) -> None:
    folder, home = installs[work], installs["home"]
    for cwd in (folder, folder / "src"):
        if not cwd.is_dir():
            continue
        for command in (".codeact/bin/codeact run --code 'x'", f"{ROOTED} run --code 'x'"):
            assert not allowed(run(cwd, GLOBAL_ENTRY, call(command, cwd), env_for(state, home, cwd)))
    assert not (installs["home"] / "pwned").exists()


def test_global_hook_passes_the_plugin_launcher(installs: dict[str, Path], state: Path) -> None:
    work, plugin, home = installs["plain"], installs["plugin"], installs["home"]
    command = f"{plugin}/skills/codeact/../../bin/codeact run --code 'x'"
    assert allowed(run(work, GLOBAL_ENTRY, call(command, work), env_for(state, home, work)))


# --- the plugin hook passes the global and the repository launchers -----------------------------------------------
@pytest.mark.parametrize("command", [f"{GLOBAL} run --code 'x'", f"{ROOTED} run --code 'x'",
                                     ".codeact/bin/codeact run --code 'x'"])
def test_plugin_hook_passes_the_other_installs(command: str, installs: dict[str, Path], state: Path) -> None:
    repo, plugin, home = installs["repo"], installs["plugin"], installs["home"]
    env = env_for(state, home, repo, COPILOT_PLUGIN_ROOT=str(plugin))
    if command != f"{GLOBAL} run --code 'x'":  # a repository's launcher: only once its own hook ran (40.1)
        assert not allowed(run(plugin, PLUGIN_ENTRY, call(command, repo), env))
        repo_session_start(repo, env)
    assert allowed(run(plugin, PLUGIN_ENTRY, call(command, repo), env))
    env = env_for(state, installs["bare"], installs["plain"], COPILOT_PLUGIN_ROOT=str(plugin))
    assert not allowed(run(plugin, PLUGIN_ENTRY, call(command, installs["plain"]), env))


# --- one session note ---------------------------------------------------------------------------------------------
def session_note(cwd: Path, entry: str, work: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(CLI_BASH + [entry], cwd=cwd, env=env, capture_output=True, timeout=10,
                          input=json.dumps({"sessionId": "s", "cwd": str(work), "source": "new"}).encode())
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    return json.loads(proc.stdout)["additionalContext"] if proc.stdout else ""


def test_one_session_note_names_every_install(installs: dict[str, Path], state: Path) -> None:
    repo, home, plugin = installs["repo"], installs["home"], installs["plugin"]
    env = env_for(state, home, repo, CODEACT_VENV=str(state))
    # the CLI runs the user's sessionStart hooks first (seen on 1.0.102): the repository's has not run yet, so the
    # user's note names only the installs the user made; the repository's hook, next, adds the list with itself in
    global_note = session_note(repo, GLOBAL_ENTRY.replace("pre-tool-use", "session-start"), repo, env)
    repo_note = session_note(repo, ". .codeact/hooks/session-start.sh", repo, env)
    plugin_note = session_note(plugin, PLUGIN_ENTRY.replace("pre-tool-use", "session-start"), repo,
                               {**env, "COPILOT_PLUGIN_ROOT": str(plugin)})
    assert plugin_note == "", plugin_note  # the global install speaks
    assert global_note.startswith("CodeAct (exclusive mode)"), global_note
    assert f"global (exclusive): {GLOBAL}" in global_note
    assert "repo (exclusive)" not in global_note
    assert f"plugin (exclusive): {plugin}/bin/codeact" in global_note
    assert repo_note.startswith("CodeAct installs in force here") and "(exclusive mode)" not in repo_note, repo_note
    for named in ("repo (exclusive): .codeact/bin/codeact", f"global (exclusive): {GLOBAL}",
                  f"plugin (exclusive): {plugin}/bin/codeact"):
        assert named in repo_note, repo_note
    assert session_note(repo, ". .codeact/hooks/session-start.sh", repo, env) == repo_note  # no note names it yet
    # once the repository's hook recorded the session (a resumed session), the note names it too
    again = session_note(repo, GLOBAL_ENTRY.replace("pre-tool-use", "session-start"), repo, env)
    assert "repo (exclusive): .codeact/bin/codeact" in again, again
    # the global install off: the plugin speaks (it comes next), naming the installs that are on
    off = {**env, "COPILOT_PLUGIN_ROOT": str(plugin)}
    assert session_note(repo, ". .codeact/hooks/session-start.sh", repo, {**env, "COPILOT_HOME": str(
        installs["bare"])}).startswith("CodeAct (exclusive mode)")  # alone: the repository's hook speaks
    assert session_note(plugin, PLUGIN_ENTRY.replace("pre-tool-use", "session-start"), repo,
                        {**off, "COPILOT_HOME": str(installs["bare"])}).count("CodeAct (exclusive mode)") == 1


# --- 26.6: a payload too big to read in time ----------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["exclusive", "nudge"])
def test_a_60_mib_call_is_decided_at_once(mode: str, installs: dict[str, Path], state: Path) -> None:
    repo = installs["repo"]
    big = call(".codeact/bin/codeact run --code '" + "x" * (60 << 20) + "'", repo).encode()
    started = time.monotonic()
    result = run(repo, REPO_ENTRY, big, hook_env(state, mode))
    seconds = time.monotonic() - started
    assert seconds < 2.5, f"{seconds:.1f}s: the hook read the whole payload"
    if mode == "exclusive":
        assert result.reason.startswith(f"CodeAct exclusive mode: {spec.WHY_TEXT['too_long']}. "), result.reason
    else:
        assert allowed(result)  # nudge counts reads; a shell call breaks the run


def test_a_call_just_over_the_limit_is_too_long_and_one_under_passes(installs: dict[str, Path], state: Path) -> None:
    repo = installs["repo"]
    head = call(".codeact/bin/codeact run --code ''", repo)
    pad = spec.MAX_COMMAND_BYTES - len(head)
    fits = call(".codeact/bin/codeact run --code '" + "x" * pad + "'", repo)
    assert len(fits) == spec.MAX_COMMAND_BYTES
    assert allowed(run(repo, REPO_ENTRY, fits, hook_env(state, "exclusive")))
    over = call(".codeact/bin/codeact run --code '" + "x" * (pad + 1) + "'", repo)
    result = run(repo, REPO_ENTRY, over, hook_env(state, "exclusive"))
    assert result.reason.startswith(f"CodeAct exclusive mode: {spec.WHY_TEXT['too_long']}. ")
