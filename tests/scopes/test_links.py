"""`codeact link` (global scope) as a library: idempotent, relinks a moved install, never touches what it did not
make, refuses an install inside $COPILOT_HOME, and `--remove` removes only its own links."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codeact.layout import LAYOUTS
from codeact.lifecycle import links
from tests.conftest import REPO_ROOT, make_repo

PATHS = [rel for rel, _ in LAYOUTS["global"].links]


@pytest.fixture(scope="module")
def install(template_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A global-scope install folder (stamped, tasks off: nothing linked yet)."""
    from copier import run_copy

    dest = make_repo(tmp_path_factory.mktemp("global") / "dotfiles")
    run_copy(str(template_src), dest, data={"scope": "global"}, defaults=True, unsafe=True, vcs_ref="HEAD",
             quiet=True, skip_tasks=True)
    return dest


def test_link_is_idempotent_and_exact(install: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    changed, warnings = links.link(install, home)
    assert len(changed) == len(PATHS) and not warnings
    for rel, target in LAYOUTS["global"].links:
        assert os.readlink(home / rel) == str(install.resolve() / target)
    assert links.link(install, home) == ([], [])


def test_a_moved_install_is_relinked_and_foreign_paths_are_left_alone(install: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = tmp_path / "old-place"
    shutil.copytree(install, old, symlinks=True)
    links.link(old, home)
    shutil.rmtree(old)  # the user moved the folder: every link dangles
    (home / "skills/codeact-update").unlink()
    (home / "skills/codeact-update").mkdir()  # now the user's own skill of that name
    (home / "skills/codeact-update/SKILL.md").write_text("mine\n")
    (home / "agents/codeact.agent.md").unlink()
    (home / "agents/codeact.agent.md").symlink_to(tmp_path / "someone-elses.md")  # a foreign (dangling) link
    changed, warnings = links.link(install, home)
    assert sorted(line.split()[1] for line in changed) == sorted(
        str(home / p) for p in PATHS if p not in ("skills/codeact-update", "agents/codeact.agent.md"))
    assert all(line.startswith("relinked ") for line in changed)
    assert sorted(warnings) == sorted([
        f"left alone: {home}/agents/codeact.agent.md exists and is not a codeact link (move it away and run "
        "`codeact link` again to link it)",
        f"left alone: {home}/skills/codeact-update exists and is not a codeact link (move it away and run "
        "`codeact link` again to link it)"])
    removed, warnings = links.unlink(install, home)
    assert len(removed) == len(PATHS) - 2 and len(warnings) == 2
    assert (home / "skills/codeact-update/SKILL.md").read_text() == "mine\n"
    assert os.readlink(home / "agents/codeact.agent.md") == str(tmp_path / "someone-elses.md")


def test_the_command_refuses_an_install_inside_copilot_home(install: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT_", "CODEACT_"))}
    env.update(PYTHONPATH=str(REPO_ROOT / "runtime"), COPILOT_HOME=str(install.parent))
    proc = subprocess.run([sys.executable, "-m", "codeact", "link", "--workspace", str(install)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and f"{install.resolve()} is inside $COPILOT_HOME" in proc.stderr, proc.stderr
    assert not install.parent.joinpath("codeact").exists()
    env["COPILOT_HOME"] = str(tmp_path / "home")
    proc = subprocess.run([sys.executable, "-m", "codeact", "link", "--workspace", str(install)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.count("codeact link: linked ") == len(PATHS), proc.stdout
    proc = subprocess.run([sys.executable, "-m", "codeact", "link", "--workspace", str(install), "--remove"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.count("codeact link: removed ") == len(PATHS), proc.stdout
    assert not any((tmp_path / "home" / p).is_symlink() for p in PATHS)
