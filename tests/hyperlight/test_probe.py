"""Choosing hyperlight only where it runs: the launcher's pre-check, the cached probe, auto and explicit choices."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from codeact import backends
from codeact.backends import boot_hyperlight, hyperlight, precheck, probe
from codeact.core.limits import Limits
from codeact.errors import BackendUnavailable
from tests.hyperlight.conftest import HERE, fake_backend, real_hyperlight_reason

REPO = HERE.parent.parent
RUNTIME = REPO / "runtime"
PRECHECK = RUNTIME / "codeact" / "backends" / "precheck.py"


# --- precheck.py: what the launcher runs before any venv exists ----------------------------------------------

def test_precheck_prints_yes_or_no_with_a_reason_fast() -> None:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-S", str(PRECHECK)], capture_output=True, text=True, timeout=30)
        times.append(time.perf_counter() - started)
    assert out.stdout == "yes\n" or out.stdout.startswith("no: ")
    assert out.returncode == (0 if out.stdout == "yes\n" else 1)
    assert min(times) < 1.0  # ~20 ms on a quiet machine; generous for loaded CI runners
    in_process = []
    for _ in range(5):
        started = time.perf_counter()
        precheck.reason()
        in_process.append(time.perf_counter() - started)
    assert min(in_process) < 0.05


def test_precheck_parses_as_old_python() -> None:
    """The launcher may run it with whatever python3 the system has."""
    ast.parse(PRECHECK.read_text(encoding="utf-8"), feature_version=(3, 6))


def test_precheck_imports_only_the_standard_library() -> None:
    tree = ast.parse(PRECHECK.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # what a type checker alone reads (the type comments' names) never runs
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = []
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"os", "sys", "json"}
    assert "TYPE_CHECKING = False" in PRECHECK.read_text(encoding="utf-8")  # not typing's: it is never imported


@pytest.mark.parametrize("settings, env, expected", [
    ({"backend": "monty"}, {}, "no: the backend is pinned to monty (settings)"),
    ({"backend": "hyperlight"}, {}, "yes: the backend is pinned to hyperlight (settings)"),
    ({"backend": "monty"}, {"CODEACT_BACKEND": "hyperlight"}, "yes: the backend is pinned to hyperlight "
                                                               "(CODEACT_BACKEND)"),
    ({"backend": "auto"}, {}, None),
    (None, {}, None),  # unreadable settings: the machine decides
])
def test_precheck_follows_a_pinned_backend(tmp_path: Path, settings: dict | None, env: dict[str, str],
                                           expected: str | None) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings) if settings is not None else "{not json")
    run_env = {k: v for k, v in os.environ.items() if k != "CODEACT_BACKEND"}
    out = subprocess.run([sys.executable, "-S", str(PRECHECK), str(path)], capture_output=True, text=True,
                         timeout=30, env={**run_env, **env})
    machine = precheck.decide(None, {})
    assert out.stdout.strip() == (expected or machine)
    assert out.returncode == (0 if out.stdout.startswith("yes") else 1)


@pytest.fixture
def fake_linux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A Linux x86_64 glibc 2.36 machine whose /dev and /sys/module are folders under ``tmp_path``."""
    monkeypatch.setattr(precheck.sys, "platform", "linux")
    monkeypatch.setattr(precheck, "_machine", lambda: "x86_64")
    monkeypatch.setattr(precheck, "glibc_version", lambda: (2, 36))
    (tmp_path / "dev").mkdir()
    (tmp_path / "sys-module").mkdir()
    monkeypatch.setattr(precheck, "MSHV", str(tmp_path / "dev" / "mshv"))
    monkeypatch.setattr(precheck, "KVM", str(tmp_path / "dev" / "kvm"))
    monkeypatch.setattr(precheck, "DEVICES", (precheck.MSHV, precheck.KVM))
    monkeypatch.setattr(precheck, "SYS_MODULE", str(tmp_path / "sys-module"))
    return tmp_path


@pytest.mark.usefixtures("fake_linux")
def test_precheck_passes_with_an_openable_kvm(capsys: pytest.CaptureFixture[str]) -> None:
    Path(precheck.KVM).write_text("")
    assert precheck.reason() is None
    assert precheck.main([]) == 0 and capsys.readouterr().out == "yes\n"


@pytest.mark.parametrize("setup, expected", [
    ({"platform": "darwin"}, "macOS: hyperlight-sandbox 0.8 has no macOS wheels"),
    ({"machine": "aarch64"}, "Linux on aarch64: no hyperlight wheels for this CPU"),
    ({"glibc": None}, "Linux x86_64 without glibc (musl?): hyperlight has manylinux wheels only"),
    ({"glibc": (2, 17)}, "glibc 2.17 is older than the 2.28 hyperlight's wheels need"),
    ({}, "no hypervisor device"),
    ({"kvm": "Permission denied"}, "cannot be opened (Permission denied)"),
    ({"kvm": None, "modules": ["kvm_pvm"]}, "is provided by kvm_pvm, a software KVM on which hyperlight fails"),
])
def test_precheck_says_why_not(fake_linux: Path, monkeypatch: pytest.MonkeyPatch, setup: dict, expected: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    if "platform" in setup:
        monkeypatch.setattr(precheck.sys, "platform", setup["platform"])
    if "machine" in setup:
        monkeypatch.setattr(precheck, "_machine", lambda: setup["machine"])
    if "glibc" in setup:
        monkeypatch.setattr(precheck, "glibc_version", lambda: setup["glibc"])
    if "kvm" in setup:
        Path(precheck.KVM).write_text("")
        if setup["kvm"]:
            monkeypatch.setattr(precheck, "_can_open", lambda _path: setup["kvm"])
    for module in setup.get("modules", []):
        (fake_linux / "sys-module" / module).mkdir()
    assert expected in (precheck.reason() or "")
    assert precheck.main([]) == 1
    out = capsys.readouterr().out
    assert out.startswith("no: ") and expected in out
    failing = [c for c in precheck.checks() if not c["ok"]]
    assert failing and failing[0]["fix"]  # every failure names its fix


def test_mshv_wins_over_a_software_kvm(fake_linux: Path) -> None:
    Path(precheck.MSHV).write_text("")
    Path(precheck.KVM).write_text("")
    (fake_linux / "sys-module" / "kvm_pvm").mkdir()
    assert precheck.reason() is None


# --- the probe and its cache --------------------------------------------------------------------------------

@pytest.fixture
def counted_probe(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Cheap checks pass, the package is there, and the probe fails; returns the probe's call counter."""
    calls = [0]

    def fake_probe(timeout: float = probe.PROBE_TIMEOUT, *, boot: probe.Boot) -> probe.Verdict:  # noqa: ARG001 - run_probe's signature
        calls[0] += 1
        return probe.Verdict(False, "hyperlight's probe failed: Unknown KVM VCPU exit", probe.FIX_PROBE, "probe",
                             time.time(), 12.0)

    monkeypatch.setattr(probe, "precheck_verdict", lambda: None)
    monkeypatch.setattr(probe, "package_verdict", lambda: None)
    monkeypatch.setattr(probe, "run_probe", fake_probe)
    return calls


def test_probe_failure_is_detected_and_cached(counted_probe: list[int], private_cache: Path) -> None:
    first = probe.verdict(boot=boot_hyperlight)
    assert (first.ok, first.source, counted_probe[0]) == (False, "probe", 1)
    second = probe.verdict(boot=boot_hyperlight)
    assert (second.ok, second.source, second.reason, counted_probe[0]) == (False, "cache", first.reason, 1)
    assert hyperlight.unavailable_reason() == first.reason and counted_probe[0] == 1
    record = json.loads((private_cache / probe.CACHE_FILE).read_text())
    assert record["key"]["boot"] == probe.boot_id() and record["ok"] is False
    probe.verdict(refresh=True, boot=boot_hyperlight)
    assert counted_probe[0] == 2


def test_a_new_boot_probes_again(counted_probe: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    probe.verdict(boot=boot_hyperlight)
    monkeypatch.setattr(probe, "boot_id", lambda: "another-boot")
    probe.verdict(boot=boot_hyperlight)
    assert counted_probe[0] == 2


def test_unwritable_cache_still_answers(counted_probe: list[int], monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert probe.verdict(boot=boot_hyperlight).ok is False and probe.verdict(boot=boot_hyperlight).ok is False
    assert counted_probe[0] == 2  # nothing cached, so each call probes; but nothing breaks


def test_cached_verdict_needs_no_import_of_hyperlight(private_cache: Path) -> None:
    """`codeact run` with auto asks on every start: it must read one small file and import nothing heavy."""
    script = textwrap.dedent("""
        import sys, time
        from codeact.backends import probe
        probe.precheck_verdict = lambda: None   # as on a machine with a working hypervisor
        probe.package_verdict = lambda: None
        def boom(*a, **k):
            raise AssertionError("probed although a verdict was cached")
        probe.run_probe = boom
        probe.write_cache(probe.package_origin() or "", probe.Verdict(True, probed_at=time.time()))
        from codeact.backends import choose, hyperlight
        started = time.perf_counter()
        choice = choose(None, "auto", {})
        ms = (time.perf_counter() - started) * 1000
        print(choice.name, "hyperlight_sandbox" in sys.modules, f"{ms:.2f}")
    """)
    env = {**os.environ, "PYTHONPATH": str(RUNTIME), "XDG_CACHE_HOME": str(private_cache.parent)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    name, imported, ms = out.stdout.split()
    assert (name, imported) == ("hyperlight", "False")
    assert float(ms) < 50  # reading the verdict: about 0.2 ms (generous for loaded machines)


def test_probe_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SANDBOX_HANG", "1")
    started = time.monotonic()
    error = hyperlight.probe_sandbox(1.0, backend=fake_backend())
    assert error == "TimeoutError: the program ran longer than the 1 s time limit (raise it with --timeout)"
    assert time.monotonic() - started < 5


def test_a_boot_failure_after_a_good_probe_is_remembered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          counted_probe: list[int]) -> None:
    """A real run that cannot boot records the failure, so auto stops choosing hyperlight."""
    stand_in = tmp_path / "standin"
    stand_in.mkdir()
    (stand_in / "hyperlight_sandbox.py").write_text("from fake_sandbox import FakeSandbox as Sandbox\n")
    monkeypatch.setenv("FAKE_SANDBOX_BOOT_ERROR", "No Hypervisor was found for Sandbox")
    probe.write_cache(probe.package_origin() or "", probe.Verdict(True, probed_at=time.time()))
    assert probe.verdict(boot=boot_hyperlight).ok
    backend = hyperlight.HyperlightBackend(path=[str(stand_in), str(HERE)])  # the default factory name
    program = backends.Program(code="1", tools={}, stubs="", limits=Limits(timeout=10),
                               call_tool=lambda *_a: None, on_print=lambda _text: None)
    with pytest.raises(BackendUnavailable, match="No Hypervisor was found"):
        backend.execute(program)
    after = probe.verdict(boot=boot_hyperlight)
    assert after.ok is False and "No Hypervisor was found" in after.reason and counted_probe[0] == 0


# --- choosing -------------------------------------------------------------------------------------------------

@pytest.mark.usefixtures("counted_probe")
def test_auto_falls_back_to_monty_with_the_reason() -> None:
    choice = backends.choose(None, "auto", {})
    assert choice.name == "monty"
    assert choice.reason == "auto: monty, because hyperlight cannot run here (hyperlight's probe failed: " \
                            "Unknown KVM VCPU exit)"


def test_auto_on_this_machine() -> None:
    verdict = probe.verdict(boot=boot_hyperlight)
    choice = backends.choose(None, "auto", {})
    if verdict.ok:
        assert choice.name == "hyperlight"
    else:
        assert choice.name == "monty" and verdict.reason in choice.reason


def test_explicit_choices_skip_the_probe(counted_probe: list[int]) -> None:
    assert backends.choose("monty", "hyperlight", {}).name == "monty"
    assert backends.choose(None, "auto", {"CODEACT_BACKEND": "hyperlight"}).reason == \
        "hyperlight chosen by CODEACT_BACKEND"
    assert counted_probe[0] == 0


@pytest.mark.usefixtures("counted_probe")
def test_create_names_the_probe_error_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "precheck_verdict", lambda: probe.Verdict(
        False, "/dev/kvm is provided by kvm_pvm, a software KVM on which hyperlight fails", "use bare metal",
        "precheck"))
    with pytest.raises(BackendUnavailable) as caught:
        hyperlight.create()
    text = str(caught.value)
    assert caught.value.exit_code == 3
    assert text.startswith("hyperlight cannot run here: /dev/kvm is provided by kvm_pvm")
    assert "hyperlight's probe failed: Unknown KVM VCPU exit" in text and "Fix: use bare metal" in text


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "precheck_verdict", lambda: None)
    monkeypatch.setattr(probe, "missing_packages", lambda: ["hyperlight_sandbox"])
    with pytest.raises(BackendUnavailable) as caught:
        hyperlight.create()
    assert 'pip install "hyperlight-sandbox[wasm,python-guest]==0.8.0"' in str(caught.value)


def test_requirement_pin_matches_the_template() -> None:
    lines = (REPO / "template" / "{{ codeact_dir }}" / "requirements-hyperlight.txt").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == [probe.REQUIREMENT]


def test_explicit_hyperlight_exits_3_with_the_error(tmp_path: Path, private_cache: Path) -> None:
    reason = real_hyperlight_reason()
    if reason is None:
        pytest.skip("hyperlight runs here, so an explicit choice succeeds")
    env = {**os.environ, "PYTHONPATH": str(RUNTIME), "XDG_CACHE_HOME": str(private_cache.parent),
           "CODEACT_CONFIG_DIR": str(tmp_path / "cfg")}
    out = subprocess.run([sys.executable, "-m", "codeact", "run", "--backend", "hyperlight", "--code", "1"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 3, out.stderr
    assert out.stdout == ""
    assert out.stderr.startswith("codeact: hyperlight cannot run here: ")
    assert "Fix: " in out.stderr and "codeact doctor --refresh" in out.stderr
