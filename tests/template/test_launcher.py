"""The stamped launcher, for real: venv bootstrap, re-sync on new requirements, a program over real files."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git

FILES = {
    "README.md": "# Demo\n",
    "src/app.py": "import os\n\n\ndef main():\n    # TODO: parse args\n    return os.getcwd()\n",
    "src/util.py": "def helper():\n    return 1  # TODO remove\n",
    "docs/guide.md": "Nothing to do here.\n",
}
PROGRAM = """
files = glob(pattern="**/*.py")
text = view(path="src/app.py")
todos = grep(pattern="TODO", glob="*.py")
{"files": files, "app_lines": len(text.splitlines()), "todos": [f"{t['path']}:{t['line']}" for t in todos]}
"""
EXPECTED = {"files": ["src/app.py", "src/util.py"], "app_lines": 6, "todos": ["src/app.py:5", "src/util.py:2"]}


def launch(project: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project / ".codeact/bin/codeact"), *args], cwd=cwd or project, input=stdin,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


@pytest.fixture
def project(stamp, tmp_path):
    path = stamp(tmp_path / "p", files=FILES)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "codeact")
    return path


def test_shared_venv_runs_a_program_that_globs_views_and_greps(project, venv_dir):
    env = {"CODEACT_VENV": str(venv_dir)}
    result = launch(project, "run", "--code", PROGRAM, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED
    # from a sub-folder, the workspace is still the git top-level; stdin works as the program source
    result = launch(project, "run", "-", env=env, stdin=PROGRAM, cwd=project / "src")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED
    assert not (project / ".codeact/.venv").exists(), "CODEACT_VENV must keep the venv out of the repo"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True,
                          text=True).stdout == ""


def test_program_errors_and_usage_errors_have_their_exit_codes(project, venv_dir):
    env = {"CODEACT_VENV": str(venv_dir)}
    failed = launch(project, "run", "--code", "x = 1\nview(path='missing.txt')", env=env)
    assert failed.returncode == 1
    assert "FileNotFoundError (line 2)" in failed.stderr and str(project) not in failed.stderr
    usage = launch(project, "run", env=env)
    assert usage.returncode == 2 and "--code" in usage.stderr
    helped = launch(project, "run", "--help", env=env)
    assert helped.returncode == 0 and "--workspace" in helped.stdout


@pytest.mark.slow
def test_clean_bootstrap_in_repo_then_resync_when_requirements_change(project):
    first = launch(project, "run", "--code", PROGRAM, env={"CODEACT_VENV": ""})
    assert first.returncode == 0, first.stderr
    assert "setting up the sandbox runtime" in first.stderr and json.loads(first.stdout) == EXPECTED
    assert (project / ".codeact/.venv/bin/python").exists()
    assert subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True,
                          text=True).stdout == "", ".codeact/.venv must be ignored by git"

    again = launch(project, "run", "--code", "1 + 1", env={"CODEACT_VENV": ""})
    assert again.returncode == 0 and again.stdout == "2\n" and again.stderr == "", "warm runs are silent"

    requirements = project / ".codeact/requirements.txt"
    requirements.write_text(requirements.read_text() + "# changed by an update\n")
    resynced = launch(project, "run", "--code", "1 + 1", env={"CODEACT_VENV": ""})
    assert resynced.returncode == 0 and "setting up the sandbox runtime" in resynced.stderr
    assert resynced.stdout == "2\n"


def test_python_without_venv_module_gets_an_actionable_message(project, tmp_path):
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "python3"
    fake.write_text(f"#!/bin/sh\ncase \"$*\" in *ensurepip*) exit 1;; esac\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    for tool in ("sh",):  # all the launcher's shell needs; the rest is the bootstrap module
        found = shutil.which(tool)
        if found:
            (fake_bin / tool).symlink_to(found)
    env = {"PATH": str(fake_bin), "CODEACT_VENV": str(tmp_path / "venvs"), "CODEACT_PYTHON": str(fake)}
    result = launch(project, "run", "--code", "1", env=env)
    assert result.returncode == 3
    assert "python3-venv" in result.stderr and "uv" in result.stderr
    assert not (tmp_path / "venvs").exists() or not any((tmp_path / "venvs").glob("*/bin/python"))


def test_copier_copy_bootstraps_the_runtime_through_its_task(stamp, tmp_path, venv_dir, monkeypatch):
    monkeypatch.setenv("CODEACT_VENV", str(venv_dir))
    project = stamp(tmp_path / "p", tasks=True, files=FILES)
    requirements = (project / ".codeact/requirements.txt").read_bytes()
    ready = [p for p in venv_dir.glob("*/.codeact-requirements.txt") if p.read_bytes() == requirements]
    assert ready, "the copy-time task must leave a ready venv for the stamped requirements"
    result = launch(project, "run", "--code", "len(glob(pattern='**/*.py'))")
    assert result.returncode == 0 and result.stdout == "2\n" and result.stderr == ""


def tool_bin(folder: Path, *tools: str) -> Path:
    """A PATH folder holding only ``tools`` (links to the real ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        assert found, tool
        (folder / tool).symlink_to(found)
    return folder


def test_a_ready_venv_is_exec_d_by_the_shell_alone_under_any_folder_name(project, venv_dir, tmp_path):
    # the shell reads the stamps: a venv the module did not name (an older launcher's) is used as it is
    requirements = (project / ".codeact/requirements.txt").read_bytes()
    ready = next(p.parent for p in venv_dir.glob("*/.codeact-requirements.txt") if p.read_bytes() == requirements)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "any-name").symlink_to(ready, target_is_directory=True)
    (shared / "stale").mkdir()
    (shared / "stale/.codeact-requirements.txt").write_text("other\n")
    # no python3 or python on PATH: the shell (with cmp) compares the stamps, no Python runs before the exec
    env = {"PATH": str(tool_bin(tmp_path / "bin", "sh", "git", "cmp")), "CODEACT_VENV": str(shared)}
    result = launch(project, "run", "--code", "1 + 1", env=env)
    assert result.returncode == 0 and result.stdout == "2\n" and result.stderr == "", result.stderr
    traced = subprocess.run(["sh", "-x", str(project / ".codeact/bin/codeact"), "run", "--code", "1"], cwd=project,
                            capture_output=True, text=True, env={**os.environ, **env})
    assert traced.returncode == 0 and "codeact.bootstrap" not in traced.stderr


def test_a_stamp_one_byte_off_is_not_ready(project, tmp_path):
    """The shell's comparison of the stamps (cmp) is byte for byte: a stamp with no final newline, an extra blank
    line, a trailing space or a CRLF is another requirements file (the venv would be re-synced, here: no Python
    on PATH to do it, exit 3); the exact one is exec'd."""
    requirements = (project / ".codeact/requirements.txt").read_bytes()
    env_bin = tool_bin(tmp_path / "bin", "sh", "git", "cmp")
    near = (requirements.rstrip(b"\n"), requirements + b"\n", requirements.replace(b"\n", b" \n", 1),
            requirements.replace(b"\n", b"\r\n"), b"")
    for i, stamp in enumerate((*near, requirements)):
        shared = tmp_path / f"shared{i}"
        (shared / "v/bin").mkdir(parents=True)
        (shared / "v/bin/python").write_text("#!/bin/sh\necho picked\n")
        (shared / "v/bin/python").chmod(0o755)
        (shared / "v/.codeact-requirements.txt").write_bytes(stamp)
        result = launch(project, "run", "--code", "1", env={"PATH": str(env_bin), "CODEACT_VENV": str(shared)})
        if stamp == requirements:
            assert result.returncode == 0 and result.stdout == "picked\n", result.stderr
        else:
            assert result.returncode == 3 and "no Python >= 3.10 found" in result.stderr, (stamp[-20:], result.stderr)


FAKE_UV = """#!/bin/sh
# a stand-in for uv: `uv venv ... TARGET` makes TARGET/bin/python run the test's Python; every call is logged
echo "$*" >> "$UV_LOG"
case "$1" in
  venv) for target; do :; done
        sleep 1
        mkdir -p "$target/bin"
        printf '#!/bin/sh\\nexec %s "$@"\\n' "$UV_PYTHON" > "$target/bin/python"
        chmod +x "$target/bin/python" ;;
esac
"""


def test_cold_shared_venv_bootstraps_once_under_the_sha256_name_even_when_two_launchers_race(project, tmp_path):
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "uv").write_text(FAKE_UV)
    (fake / "uv").chmod(0o755)
    log, shared = tmp_path / "uv.log", tmp_path / "venvs"
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "CODEACT_VENV": str(shared),
           "UV_LOG": str(log), "UV_PYTHON": sys.executable, "CODEACT_PYTHON": sys.executable,
           "CODEACT_BACKEND": "monty"}
    launcher = str(project / ".codeact/bin/codeact")
    racers = [subprocess.Popen([launcher, "run", "-"], cwd=project, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [r.communicate("1 + 1", timeout=300) for r in racers]  # stdin is the program: the bootstrap leaves it
    assert [r.returncode for r in racers] == [0, 0], outs
    assert [o[0] for o in outs] == ["2\n", "2\n"]
    assert sum("setting up the sandbox runtime" in o[1] for o in outs) == 1
    assert [line.split()[0] for line in log.read_text().splitlines()] == ["venv", "pip"], "installed once"
    key = hashlib.sha256((project / ".codeact/requirements.txt").read_bytes()).hexdigest()[:16]
    assert [p.name for p in shared.iterdir()] == [key]
    again = launch(project, "run", "--code", "3", env=env)
    assert again.returncode == 0 and again.stdout == "3\n" and again.stderr == ""


def test_powershell_launcher_parses_and_calls_the_bootstrap_module(project):
    source = (project / ".codeact/bin/codeact.ps1").read_bytes()
    assert b"from codeact.bootstrap import main" in source and b"Get-FileHash" not in source, \
        "one naming scheme: the module's"
    assert b" -m codeact" not in source, "python -m would put the workspace first on sys.path"
    ts = pytest.importorskip("tree_sitter")
    tsp = pytest.importorskip("tree_sitter_powershell")
    tree = ts.Parser(ts.Language(tsp.language())).parse(source)
    assert not tree.root_node.has_error


@pytest.mark.slow
def test_powershell_launcher_runs_a_program(project, venv_dir):
    """Executed, not only parsed, where PowerShell is installed (the Windows CI job: .github/workflows/ci.yml)."""
    pwsh = shutil.which("pwsh")
    if not pwsh:
        pytest.skip("pwsh is not installed: Debian's repositories have no powershell package, and the PowerShell "
                    "dotnet tool needs a .NET SDK this machine kind lacks")
    run = subprocess.run([pwsh, "-NoLogo", "-NoProfile", "-NonInteractive", "-File",
                          str(project / ".codeact/bin/codeact.ps1"), "run", "--code", PROGRAM], cwd=project,
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "CODEACT_VENV": str(venv_dir)})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == EXPECTED


SHADOW = "import pathlib; pathlib.Path('PWNED').write_text('the host ran the workspace')\n"


def test_a_link_to_the_launcher_runs_the_install_it_points_to(project, venv_dir, tmp_path):
    """~/bin/codeact -> .codeact/bin/codeact (and a link to that link, relative): the install is where the links
    lead, not the link's folder."""
    (tmp_path / "bin" / "deeper").mkdir(parents=True)
    (tmp_path / "bin" / "codeact").symlink_to(project / ".codeact/bin/codeact")
    (tmp_path / "bin" / "deeper" / "cx").symlink_to("../codeact")
    env = {**os.environ, "CODEACT_VENV": str(venv_dir)}
    for link in (tmp_path / "bin" / "codeact", tmp_path / "bin" / "deeper" / "cx"):
        done = subprocess.run([str(link), "run", "--code", "print(6 * 7)"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=600)
        assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr


@pytest.mark.parametrize("server", ["0", "1"])
def test_a_deleted_current_folder_is_said_with_exit_2(project, venv_dir, tmp_path, server):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"cd {gone} && rmdir {gone} && exec {project / '.codeact/bin/codeact'} run --code 'print(1)'"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "CODEACT_VENV": str(venv_dir), "CODEACT_SERVER": server})
    assert done.returncode == 2, done.stderr
    assert "current folder no longer exists" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("cwd", [".", "src"])
def test_a_codeact_package_in_the_workspace_never_runs_on_the_host(project, venv_dir, cwd):
    """A program may write codeact/__init__.py (or bootstrap.py) into the workspace; `python -m codeact` run from
    there would import it on the host. The launcher must run its own runtime whatever the current folder holds."""
    env = {"CODEACT_VENV": str(venv_dir)}
    written = launch(project, "run", "--code", 'create(path="codeact/__init__.py", file_text=' + repr(SHADOW) + ')\n'
                     'create(path="src/codeact/__init__.py", file_text=' + repr(SHADOW) + ')\n'
                     'create(path="src/codeact/cli/__init__.py", file_text=' + repr(SHADOW) + ')', env=env)
    assert written.returncode == 0, written.stderr
    result = launch(project, "run", "--code", "print(6 * 7)", env=env, cwd=project / cwd)
    assert (result.returncode, result.stdout) == (0, "42\n"), result.stderr
    assert not (project / cwd / "PWNED").exists() and not (project / "PWNED").exists()
