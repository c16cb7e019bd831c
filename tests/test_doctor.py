"""`codeact doctor`: which backend runs and why, each failing check with its fix, exit 0 or 3."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import pytest

from codeact import cli
from codeact.backends import boot_hyperlight, precheck, probe
from codeact.cli import doctor as doctor_cli
from codeact.lifecycle import doctor
from codeact.lifecycle.doctor import Check

REAL_TEMPLATE_CHECKS = doctor.template_checks  # before any test replaces it


def _ok_prechecks() -> list[dict[str, Any]]:
    return [{"name": "platform", "ok": True, "detail": "Linux x86_64, glibc 2.36", "fix": None},
            {"name": "hypervisor", "ok": True, "detail": "/dev/kvm present and opens read-write", "fix": None},
            {"name": "software KVM", "ok": True, "detail": "no software KVM module loaded", "fix": None}]


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """A machine where everything works (hyperlight included), each piece replaceable by a test."""
    state: dict[str, Any] = {"probe_calls": 0, "probe_ok": True}
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CODEACT_BACKEND", raising=False)
    monkeypatch.setattr(precheck, "checks", _ok_prechecks)
    monkeypatch.setattr(probe, "missing_packages", lambda: [])
    monkeypatch.setattr(doctor, "hyperlight_package_check",
                        lambda: Check("hyperlight", "package", True, "hyperlight-sandbox 0.8.0 imports"))
    monkeypatch.setattr(doctor, "monty_smoke", lambda: Check("monty", "run", True, "ran 6*7 -> 42 in 3 ms"))
    monkeypatch.setattr(doctor, "template_checks", lambda: ([
        Check("template", "copier", True, "copier 9.19.1"),
        Check("template", "extensions", True, "copier-template-extensions imports beside copier")], "9.19.1"))

    def fake_probe(timeout: float = probe.PROBE_TIMEOUT, *, boot: probe.Boot) -> probe.Verdict:  # noqa: ARG001 - run_probe's signature
        state["probe_calls"] += 1
        if state["probe_ok"]:
            return probe.Verdict(True, source="probe", probed_at=time.time(), probe_ms=180.0)
        return probe.Verdict(False, "hyperlight's probe failed: RuntimeError: Failed to create sandbox: Unknown "
                                    "KVM VCPU exit", probe.FIX_PROBE, "probe", time.time(), 60.0)

    monkeypatch.setattr(probe, "run_probe", fake_probe)
    return state


def _doctor(refresh: bool = False) -> tuple[doctor.Report, str]:
    report = doctor.collect(refresh=refresh)
    return report, doctor_cli.render(report)


def _line(text: str, name: str) -> str:
    """The row of check ``name`` (the hyperlight group's when both groups have one)."""
    rows: dict[str, str] = {}
    group = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            group = line
        elif line[8:8 + len(name) + 1] == name + " ":
            rows.setdefault(group, line)
    return rows.get("hyperlight") or next(iter(rows.values()))


@pytest.mark.usefixtures("machine")
def test_everything_works_and_auto_picks_hyperlight() -> None:
    report, text = _doctor()
    assert (report.backend, report.works, report.exit_code) == ("hyperlight", True, 0)
    assert "backend: hyperlight - auto: hyperlight's probe booted a micro-VM on this machine" in text
    assert "FAIL" not in text and "probed now, 180 ms" in text
    assert text.rstrip().endswith("ok: programs run on hyperlight.")


def test_probe_is_cached_and_refresh_probes_again(machine: dict[str, Any]) -> None:
    _doctor()
    _, text = _doctor()
    assert machine["probe_calls"] == 1 and "cached from a probe 0 s ago; --refresh probes again" in text
    _doctor(refresh=True)
    assert machine["probe_calls"] == 2


@pytest.mark.parametrize("failure, check, fix", [
    ("probe", "probe", "hyperlight needs a working hardware hypervisor"),
    ("kvm_pvm", "software KVM", "kvm_pvm emulates KVM in software"),
    ("device access", "hypervisor", "sudo usermod -aG kvm $USER"),
    ("no device", "hypervisor", "enable VT-x/AMD-V in the firmware"),
    ("macOS", "platform", "use the monty backend (auto picks it)"),
    ("package", "package", 'pip install "hyperlight-sandbox[wasm,python-guest]==0.8.0"'),
    ("cache", "cache", "point XDG_CACHE_HOME at a writable folder"),
])
def test_hyperlight_failures_print_their_fix_and_auto_falls_back(
        failure: str, check: str, fix: str, machine: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    bad: dict[str, Any] | None = None
    if failure == "probe":
        machine["probe_ok"] = False
    elif failure == "kvm_pvm":
        bad = {"name": "software KVM", "ok": False, "detail": "/dev/kvm is provided by kvm_pvm, a software KVM on "
               "which hyperlight fails", "fix": precheck.FIX_SOFTWARE_KVM.format(module="kvm_pvm")}
    elif failure == "device access":
        bad = {"name": "hypervisor", "ok": False, "detail": "/dev/kvm cannot be opened (Permission denied)",
               "fix": precheck.FIX_DEVICE_ACCESS.format(device="/dev/kvm")}
    elif failure == "no device":
        bad = {"name": "hypervisor", "ok": False, "detail": "no hypervisor device (/dev/mshv or /dev/kvm)",
               "fix": precheck.FIX_NO_DEVICE}
    elif failure == "macOS":
        monkeypatch.setattr(precheck, "checks", lambda: [
            {"name": "platform", "ok": False, "detail": "macOS: hyperlight-sandbox 0.8 has no macOS wheels",
             "fix": precheck.FIX_PLATFORM}])
    elif failure == "package":
        monkeypatch.setattr(probe, "missing_packages", lambda: ["hyperlight_sandbox"])
        monkeypatch.setattr(doctor, "hyperlight_package_check", lambda: Check(
            "hyperlight", "package", False, "hyperlight-sandbox is not installed in this Python",
            probe.FIX_INSTALL))
    elif failure == "cache":
        blocker = tmp_path / "a-file"
        blocker.write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    if bad is not None:
        monkeypatch.setattr(precheck, "checks", lambda: [bad if c["name"] == bad["name"] else c
                                                         for c in _ok_prechecks()])
    report, text = _doctor()
    failing = [c for c in report.checks if c.ok is False]
    assert [c.name for c in failing] == [check]
    row = _line(text, check)
    assert "FAIL" in row
    following = text.splitlines()[text.splitlines().index(row) + 1]
    assert following.strip().startswith("fix: ") and fix in following
    if failure == "cache":  # the cache is a nicety: hyperlight still works, just probes each time
        assert report.backend == "hyperlight" and report.exit_code == 0
    else:
        assert report.backend == "monty" and report.exit_code == 0
        assert report.reason.startswith("auto: monty, because hyperlight cannot run here (")
    if failure == "package":
        assert "skip" in _line(text, "probe") and machine["probe_calls"] == 0


def test_probe_runs_even_when_a_cheap_check_fails(machine: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """So the user sees hyperlight's own error, not only our guess."""
    machine["probe_ok"] = False
    monkeypatch.setattr(precheck, "checks", lambda: [
        *_ok_prechecks()[:2], {"name": "software KVM", "ok": False, "detail": "kvm_pvm", "fix": "x"}])
    report, text = _doctor()
    assert "Unknown KVM VCPU exit" in _line(text, "probe") and machine["probe_calls"] == 1


def test_explicit_hyperlight_that_cannot_run_exits_3(machine: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    machine["probe_ok"] = False
    monkeypatch.setenv("CODEACT_BACKEND", "hyperlight")
    report, text = _doctor()
    assert (report.backend, report.works, report.exit_code) == ("hyperlight", False, 3)
    assert "hyperlight chosen by CODEACT_BACKEND, but it cannot run here: hyperlight's probe failed" in text
    assert "Fix: hyperlight needs a working hardware hypervisor" in text
    assert text.rstrip().endswith("choose monty (CODEACT_BACKEND=monty, or --backend monty).")


@pytest.mark.usefixtures("machine")
def test_broken_monty_exits_3_when_monty_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEACT_BACKEND", "monty")
    monkeypatch.setattr(doctor, "monty_smoke", lambda: Check("monty", "run", False, "running 6*7 failed: "
                                                             "MontyCrashedError", doctor.FIX_MONTY))
    report, text = _doctor()
    assert (report.backend, report.exit_code) == ("monty", 3)
    assert "pip install pydantic-monty==1.6.0" in text
    assert text.rstrip().endswith("error: the chosen backend (monty) cannot run here; see the fixes above.")


@pytest.mark.usefixtures("machine")
def test_template_failures_print_their_fix_but_do_not_fail(
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "copier_python", lambda: None)
    monkeypatch.setattr(doctor, "template_checks", REAL_TEMPLATE_CHECKS)
    monkeypatch.setattr(doctor, "query_copier", lambda _python: {"copier": "9.19.1",
                                                                "extensions_error": "ModuleNotFoundError: x"})
    report, text = _doctor()
    assert report.exit_code == 0
    assert "uv tool install copier --with copier-template-extensions" in text
    assert "pipx inject copier copier-template-extensions" in text
    monkeypatch.setattr(doctor, "query_copier", lambda _python: {"copier": None, "extensions_error": None})
    _, text = _doctor()
    assert "FAIL" in _line(text, "copier") and "skip" in _line(text, "extensions")


@pytest.mark.usefixtures("machine")
def test_invalid_backend_setting_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEACT_BACKEND", "docker")
    report = doctor.collect()
    assert report.exit_code == 2 and "unknown backend 'docker'" in report.reason


@pytest.mark.usefixtures("machine")
def test_json_output_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == {"name": "hyperlight", "works": True,
                               "reason": "auto: hyperlight's probe booted a micro-VM on this machine"}
    assert data["exit_code"] == 0 and data["versions"]["codeact"]
    assert {"group", "name", "ok", "detail", "fix"} <= set(data["checks"][0])
    assert {c["group"] for c in data["checks"]} == {"monty", "hyperlight", "template"}


def test_real_doctor_on_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """No stand-ins: whatever this machine is, the answer is consistent with `codeact run`'s choice."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CODEACT_BACKEND", raising=False)
    code = doctor_cli.main(argparse.Namespace(refresh=False, json=False))
    text = capsys.readouterr().out
    verdict = probe.verdict(boot=boot_hyperlight)
    expected = "hyperlight" if verdict.ok else "monty"
    assert f"backend: {expected} - auto: " in text and code == 0
    assert "hyperlight\n" in text and "monty\n" in text


@pytest.mark.parametrize(("environ", "ok", "says"), [
    ({}, True, "keeps its loop and the worker on one of"),
    ({"CODEACT_PIN_CPU": "0"}, None, "CPU pinning is off (CODEACT_PIN_CPU=0)"),
])
def test_cpu_pinning_is_reported(environ: dict[str, str], ok: bool | None, says: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    check = doctor.cpu_check(environ)
    assert (check.group, check.name, check.ok) == ("monty", "cpu", ok) and says in check.detail


def test_cpu_pinning_needs_two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.os, "sched_getaffinity", lambda _pid: {3}, raising=False)
    assert doctor.cpu_check({}).ok is None and "one CPU" in doctor.cpu_check({}).detail


def test_asking_copier_s_python_imports_nothing_of_the_current_folder(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor runs from the repository, which programs and pull requests write: ``python -c`` puts that folder first
    on sys.path, and a ``json.py`` there ran on the host (red team round 9, issue 40)."""
    marker = tmp_path / "ran"
    for name in ("json.py", "importlib.py", "copier_template_extensions.py"):
        (tmp_path / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    monkeypatch.chdir(tmp_path)
    answer = doctor.query_copier(None)
    assert not marker.exists(), marker.read_text()
    assert set(answer) == {"copier", "extensions_error"}
