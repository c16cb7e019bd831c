"""The launchers' slow path, in process: venv naming, readiness, lock, uv or venv+pip, the hyperlight pre-check."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from codeact import bootstrap
from codeact.bootstrap import BootstrapError, ensure

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
REQUIREMENTS = "# pinned\npydantic-monty==1.6.0\n"


class FakeRun:
    """Records commands; ``venv`` creation makes the interpreter file; ``fail`` names a word that makes one fail."""

    def __init__(self, fail: str | None = None, missing_ensurepip: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail, self.missing_ensurepip = fail, missing_ensurepip

    def __call__(self, argv: Sequence[str]) -> int:
        argv = list(argv)
        self.calls.append(argv)
        if self.fail and any(self.fail in a for a in argv):
            return 1
        if "import venv, ensurepip" in argv:
            return int(self.missing_ensurepip)
        if argv[1:2] == ["venv"] or argv[1:3] == ["-m", "venv"]:
            python = bootstrap.venv_python(Path(argv[-1]))
            python.parent.mkdir(parents=True)
            python.write_text("#!/bin/sh\n")
        return 0


def which(uv: bool) -> object:
    return lambda name: {"python3": "/usr/bin/python3", "uv": "/usr/bin/uv" if uv else None}.get(name)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / ".codeact"
    root.mkdir()
    (root / "requirements.txt").write_text(REQUIREMENTS)
    return root


def no(_root: Path) -> str:
    return "no: test"


def test_shared_venvs_are_named_by_the_sha256_of_the_requirements(root: Path, tmp_path: Path) -> None:
    key = hashlib.sha256(REQUIREMENTS.encode()).hexdigest()[:16]
    assert bootstrap.requirements_key(root / "requirements.txt") == key
    assert bootstrap.target_venv(root, tmp_path / "venvs") == tmp_path / "venvs" / bootstrap.requirements_key(
        root / "requirements.txt")
    assert bootstrap.target_venv(root, None) == root / ".venv"
    first = bootstrap.requirements_key(root / "requirements.txt")
    (root / "requirements.txt").write_text(REQUIREMENTS + "mcp==2.3.0\n")
    assert bootstrap.requirements_key(root / "requirements.txt") != first


def test_uv_bootstrap_prints_progress_writes_the_stamp_last_and_then_does_nothing(root: Path, capsys) -> None:
    run = FakeRun()
    python = ensure(root, environ={}, run=run, which=which(uv=True), verdict=no)
    assert python == root / ".venv/bin/python" and python.is_file()
    assert (root / ".venv" / bootstrap.STAMP).read_text() == REQUIREMENTS
    assert [c[:2] for c in run.calls] == [["/usr/bin/python3", "-c"], ["/usr/bin/uv", "venv"], ["/usr/bin/uv", "pip"]]
    assert run.calls[2][-2:] == ["-r", str(root / "requirements.txt")]
    err = capsys.readouterr().err
    assert "codeact: setting up the sandbox runtime in" in err and "(uv)" in err and err.endswith("codeact: ready\n")
    assert sorted(p.name for p in root.iterdir()) == [".venv", "requirements.txt"], "no lock or partial left"
    again = FakeRun()
    assert ensure(root, environ={}, run=again, which=which(uv=True), verdict=no) == python
    assert again.calls == [] and capsys.readouterr().err == "", "a ready venv costs nothing"


def test_changed_requirements_resync_the_venv(root: Path) -> None:
    ensure(root, environ={}, run=FakeRun(), which=which(uv=True), verdict=no)
    (root / "requirements.txt").write_text(REQUIREMENTS + "mcp==2.3.0\n")
    assert not bootstrap.is_ready(root / ".venv", root / "requirements.txt")
    run = FakeRun()
    ensure(root, environ={}, run=run, which=which(uv=True), verdict=no)
    assert any(c[1] == "venv" for c in run.calls)
    assert bootstrap.is_ready(root / ".venv", root / "requirements.txt")


def test_shared_folder_holds_one_venv_per_requirements_hash(root: Path, tmp_path: Path) -> None:
    shared = tmp_path / "venvs"
    first = ensure(root, shared, environ={}, run=FakeRun(), which=which(uv=True), verdict=no)
    (root / "requirements.txt").write_text(REQUIREMENTS + "mcp==2.3.0\n")
    second = ensure(root, shared, environ={}, run=FakeRun(), which=which(uv=True), verdict=no)
    assert first != second and first.is_file() and second.is_file()
    assert sorted(p.name for p in shared.iterdir()) == sorted([first.parent.parent.name, second.parent.parent.name])
    assert second.parent.parent.name == bootstrap.requirements_key(root / "requirements.txt")


def test_without_uv_venv_and_pip_are_used(root: Path) -> None:
    run = FakeRun()
    ensure(root, environ={}, run=run, which=which(uv=False), verdict=no)
    assert ["/usr/bin/python3", "-c", "import venv, ensurepip"] in run.calls
    assert any(c[1:3] == ["-m", "venv"] for c in run.calls)
    pip = [c for c in run.calls if c[1:4] == ["-m", "pip", "install"]]
    assert len(pip) == 1 and pip[0][-1] == str(root / "requirements.txt")


def test_missing_ensurepip_says_how_to_fix_and_leaves_nothing(root: Path) -> None:
    with pytest.raises(BootstrapError, match="python3-venv") as caught:
        ensure(root, environ={}, run=FakeRun(missing_ensurepip=True), which=which(uv=False), verdict=no)
    assert "uv" in str(caught.value) and caught.value.exit_code == 3
    assert sorted(p.name for p in root.iterdir()) == ["requirements.txt"]


def test_failed_install_keeps_the_old_venv_and_removes_partial_and_lock(root: Path) -> None:
    ensure(root, environ={}, run=FakeRun(), which=which(uv=True), verdict=no)
    (root / "requirements.txt").write_text(REQUIREMENTS + "mcp==2.3.0\n")
    with pytest.raises(BootstrapError, match="check your network or proxy"):
        ensure(root, environ={}, run=FakeRun(fail="pip"), which=which(uv=True), verdict=no)
    assert (root / ".venv/bin/python").is_file() and (root / ".venv" / bootstrap.STAMP).read_text() == REQUIREMENTS
    assert sorted(p.name for p in root.iterdir()) == [".venv", "requirements.txt"]


def test_no_python_3_10_is_an_actionable_error(root: Path) -> None:
    with pytest.raises(BootstrapError, match="CODEACT_PYTHON"):
        ensure(root, environ={}, run=FakeRun(fail="version_info"), which=which(uv=True), verdict=no)
    assert not (root / ".venv").exists() and not (root / ".venv.lock").exists()


def test_codeact_python_is_tried_first_and_a_too_old_one_is_skipped(tmp_path: Path) -> None:
    old = tmp_path / "python3.8"
    old.write_text("#!/bin/sh\nexit 1\n")
    old.chmod(0o755)
    assert bootstrap.find_base_python({"CODEACT_PYTHON": sys.executable}) == sys.executable
    found = bootstrap.find_base_python({"CODEACT_PYTHON": str(old)}, which=lambda n: {"python3": sys.executable}.get(
        n, n if n.startswith("/") else None))
    assert found == sys.executable


def test_a_held_lock_is_waited_for_then_the_finished_venv_is_used(root: Path) -> None:
    (root / ".venv.lock").mkdir()

    def other_launcher_finishes(_seconds: float) -> None:
        ensure_ready = FakeRun()
        ensure_ready(["uv", "venv", str(root / ".venv")])
        (root / ".venv" / bootstrap.STAMP).write_text(REQUIREMENTS)
        (root / ".venv.lock").rmdir()

    run = FakeRun()
    assert ensure(root, environ={}, run=run, which=which(uv=True), verdict=no,
                  sleep=other_launcher_finishes) == root / ".venv/bin/python"
    assert run.calls == [], "the other launcher's venv is used, not rebuilt"


def test_a_lock_never_released_times_out_with_its_path(root: Path) -> None:
    (root / ".venv.lock").mkdir()
    with pytest.raises(BootstrapError, match=r"timed out waiting for .*\.venv\.lock; remove it"):
        ensure(root, environ={}, run=FakeRun(), which=which(uv=True), verdict=no, wait_s=3, sleep=lambda _s: None)


@pytest.mark.parametrize(("backend", "installed"), [("monty", False), ("hyperlight", True)])
def test_hyperlight_follows_the_real_precheck_of_the_stamped_settings(root: Path, monkeypatch, backend: str,
                                                                       installed: bool) -> None:
    monkeypatch.delenv("CODEACT_BACKEND", raising=False)
    (root / "settings.json").write_text(json.dumps({"backend": backend}))
    (root / "requirements-hyperlight.txt").write_text("hyperlight-sandbox==0.8.0\n")
    for uv in (True, False):
        run = FakeRun()
        ensure(root, root.parent / f"venvs-{uv}", environ={}, run=run, which=which(uv=uv))
        assert any(c[-1] == str(root / "requirements-hyperlight.txt") for c in run.calls) is installed


def test_a_failed_hyperlight_install_still_leaves_a_ready_venv(root: Path, capsys) -> None:
    (root / "requirements-hyperlight.txt").write_text("hyperlight-sandbox==0.8.0\n")
    python = ensure(root, environ={}, run=FakeRun(fail="requirements-hyperlight.txt"), which=which(uv=True),
                    verdict=lambda _r: "yes")
    assert python.is_file() and bootstrap.is_ready(root / ".venv", root / "requirements.txt")
    assert "hyperlight install failed; monty will be used" in capsys.readouterr().err


def test_main_prints_only_the_python_on_stdout_and_exits_3_with_the_reason(root: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(bootstrap, "run_quietly", FakeRun())
    monkeypatch.setattr(bootstrap, "ensure", lambda r, _s: r / ".venv/bin/python")
    assert bootstrap.main([str(root), ""]) == 0
    assert capsys.readouterr().out == f"{root / '.venv/bin/python'}\n"

    def broken(_r: Path, _s: Path | None) -> Path:
        raise BootstrapError(bootstrap.NO_PYTHON)

    monkeypatch.setattr(bootstrap, "ensure", broken)
    assert bootstrap.main([str(root)]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and "codeact: no Python >= 3.10 found" in captured.err
    assert bootstrap.main([]) == 2


def test_runs_under_python_dash_S_on_the_standard_library_only() -> None:
    probe = ("import sys, codeact.bootstrap, codeact.backends.precheck; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] not in (*sys.stdlib_module_names, '__main__')))")
    done = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(RUNTIME)})
    assert done.stdout.strip() == "['codeact', 'codeact.backends', 'codeact.backends.precheck', 'codeact.bootstrap', 'codeact.errors']"
    helped = subprocess.run([sys.executable, "-S", "-m", "codeact.bootstrap", "--help"], capture_output=True,
                            text=True, env={"PYTHONPATH": str(RUNTIME)})
    assert helped.returncode == 0 and "ROOT [SHARED]" in helped.stderr and helped.stdout == ""
