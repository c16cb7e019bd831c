"""Red team, round 10 (issue 40): d12699e gives the user's ``npx`` and ``npm exec``/``npm x`` servers a ``--prefix``
outside the workspace, recognised by the command's NAME and the first argument; the same npm exec reached another
way still runs the bin the workspace's ``package.json`` names. Each case runs two programs through the sandbox
(``run``, monty) and the real npm."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_attacks_round10_npx_bin import _plant_bin_and_start

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="a stdio server started by path"),
              pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")]

_FORMS = {  # the user's server entry: command and arguments, each a way npm exec is commonly reached
    "npm options first": ("npm", ["--yes", "exec", "mcp-remote", "https://example.invalid/mcp"]),
    "npm exe (an abbreviation npm takes)": ("npm", ["exe", "--yes", "mcp-remote", "https://example.invalid/mcp"]),
    "through a shell": ("sh", ["-c", "npx -y mcp-remote https://example.invalid/mcp"]),
    "through env": ("env", ["NODE_ENV=production", "npx", "-y", "mcp-remote", "https://example.invalid/mcp"]),
}


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_no_form_of_a_users_npm_exec_server_runs_the_workspaces_package_bin(tmp_path: Path, form: str) -> None:
    """Round 10's npx finding (tests/mcp/test_attacks_round10_npx_bin.py), fixed by d12699e for an entry whose
    command is ``npx`` or ``npm`` with ``exec``/``x`` first: ``_npx_outside`` adds ``--prefix`` there only. npm
    takes its options before the command (``npm --yes exec ...``) and abbreviations of it (``npm exe``), and users
    start servers through ``sh -c`` or ``env`` (to set variables): each still runs npm exec with the workspace as
    its project, which installs the workspace's own package and runs the ``tool.js`` a program created, on the
    host, with no bash. Fix: do not recognise npm by its spelling -- start the user's servers that name no ``cwd``
    in a folder programs cannot write (mcp/cache.home_folder), or give them ``npm_config_prefix`` (npm reads it
    from the environment whatever starts it) pointing at the empty folder. (Fixed: npm reads no prefix from the
    environment, so ``npx`` and ``npm`` by name are shims first on PATH that add ``--prefix``, and by path get it in
    their arguments: mcp/npm_outside.py.)"""
    command, args = _FORMS[form]
    assert not _planted_bin_ran(tmp_path, command, args), f"the program's tool.js ran on the host ({form})"


_PATH_RESET_FORMS = {  # forms where the shims first on PATH are never consulted
    "a login shell (its profile sets PATH again)": ("bash", ["-lc", "npx -y mcp-remote https://example.invalid/mcp"]),
    "npx by its path inside a shell": ("sh", ["-c", f"{shutil.which('npx')} -y mcp-remote "
                                                    "https://example.invalid/mcp"]),
}


@pytest.mark.xfail(strict=True, reason="not covered (issue 40, red team round 10; docs/security.md lists it): "
                   "mcp/npm_outside.py's shims are found only through the PATH the server is given; a login shell "
                   "resets it, a path skips it. The Copilot CLI's own start of the server reads the same files")
@pytest.mark.parametrize("form", sorted(_PATH_RESET_FORMS))
def test_a_users_npm_server_that_skips_the_path_shims_runs_no_workspace_package_bin(tmp_path: Path,
                                                                                      form: str) -> None:
    """c443918 puts ``npx``/``npm`` shims that add ``--prefix`` first on the server's ``PATH`` and adds the prefix
    to a command that names npx by its path. Two everyday ways past both: a login shell, ``bash -lc "npx -y
    mcp-remote ..."`` (how users get nvm's or Homebrew's node into a server: its ``/etc/profile`` sets ``PATH``
    afresh, so the real npx runs), and a shell string naming npx by its path (``sh -c "/usr/bin/npx ..."``, as
    nvm users write it). Either runs npm exec with the workspace as its project, which installs the workspace's
    package and runs the ``tool.js`` a program created, on the host. Fix: stop recognising npm's spellings --
    start the user's servers that name no ``cwd`` in a folder programs cannot write (mcp/cache.home_folder),
    since npm finds its project from the working folder whatever starts it."""
    command, args = _PATH_RESET_FORMS[form]
    if command == "bash" and not _login_shell_resets_path(tmp_path):
        pytest.skip("this machine's login shell keeps the PATH it is given (no /etc/profile that sets it)")
    assert not _planted_bin_ran(tmp_path, command, args), f"the program's tool.js ran on the host ({form})"


def _login_shell_resets_path(tmp_path: Path) -> bool:
    sentinel = str(tmp_path / "first-on-path")
    shown = subprocess.run(["bash", "-lc", 'printf %s "$PATH"'], capture_output=True, text=True, timeout=60,
                           env={"PATH": f"{sentinel}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                                "HOME": str(tmp_path)}).stdout
    return not shown.startswith(sentinel)


def _planted_bin_ran(tmp_path: Path, command: str, args: list[str]) -> bool:
    """:func:`_plant_bin_and_start` (round 10's set-up): whether the ``tool.js`` a program created ran on the host."""
    marker, _ = _plant_bin_and_start(tmp_path, command, args)
    return marker.exists()
