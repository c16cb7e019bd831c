"""Does hyperlight actually run here? Cheap checks, then a real probe, its verdict cached per machine boot.

A readable /dev/kvm is not enough (software KVMs such as kvm_pvm expose one and hyperlight fails on them), so the
deciding check boots a micro-VM and runs ``print(6*7)`` in a child process with a time limit. That costs a few
hundred milliseconds, so the verdict is written to ``$XDG_CACHE_HOME/codeact/hyperlight-probe.json`` (else
``~/.cache/codeact/``), keyed by the boot, the Python and the installed package; reading it back costs one small
file and no import of hyperlight. ``codeact doctor --refresh`` probes again.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ..paths import codeact_cache_dir as cache_dir
from . import precheck

# The same pin as template/{{ codeact_dir }}/requirements-hyperlight.txt (tests/hyperlight/test_probe.py checks).
REQUIREMENT = "hyperlight-sandbox[wasm,python-guest]==0.8.0"
PACKAGES = ("hyperlight_sandbox", "hyperlight_sandbox_backend_wasm", "python_guest")
PROBE_TIMEOUT = 10.0  # seconds; far above what a probe takes where hyperlight works
CACHE_FILE = "hyperlight-probe.json"
CACHE_FORMAT = 1

FIX_INSTALL = (f'install it into the codeact venv: re-run the launcher with backend hyperlight, or '
               f'pip install "{REQUIREMENT}" (keep the hyphenated extras; old pip skips [python_guest])')
FIX_PROBE = ("hyperlight needs a working hardware hypervisor: bare-metal Linux with KVM (VT-x/AMD-V), a VM with "
             "nested virtualisation, or Windows with the Hypervisor Platform; meanwhile use --backend monty "
             "(auto picks it)")
FIX_REFRESH = "After fixing, `codeact doctor --refresh` probes again"

# Boots a sandbox within the timeout and runs ``print(6*7)``: None if it printed 42, else what went wrong (one line).
# Passed in by the caller (codeact.backends.boot_hyperlight, or the hyperlight backend's own probe_sandbox): this
# module reads and writes verdicts and never imports the backend.
Boot = Callable[[float], "str | None"]


class Verdict(NamedTuple):
    """Whether hyperlight runs here; if not, why and how to fix it."""

    ok: bool
    reason: str | None = None  # one line, None when ok
    fix: str | None = None
    source: str = "probe"  # "precheck", "package", "probe" or "cache"
    probed_at: float | None = None  # when the probe ran (epoch seconds)
    probe_ms: float | None = None

    def explain(self) -> str:
        """The reason and the fix, for an error message."""
        text = self.reason or "hyperlight works here"
        return f"{text}. Fix: {self.fix}" if self.fix else text


def boot_id() -> str:
    """An identifier of this machine boot: the kernel's boot_id, else the boot time to the minute."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return "boot@" + str(int((time.time() - time.monotonic()) // 60))


def package_origin() -> str | None:
    """Where ``hyperlight_sandbox`` would be imported from, without importing it; ``None`` if not installed."""
    import importlib.util  # here: a run where the pre-check already says no never pays for it

    try:
        spec = importlib.util.find_spec("hyperlight_sandbox")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec and spec.origin else None


def missing_packages() -> list[str]:
    """Modules of hyperlight's install that cannot be found (not imported, only looked up)."""
    import importlib.util

    missing = []
    for name in PACKAGES:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except (ImportError, ValueError):
            missing.append(name)
    return missing


def _cache_key(origin: str) -> dict[str, Any]:
    try:
        stamp = os.stat(origin).st_mtime_ns
    except OSError:
        stamp = 0
    return {"format": CACHE_FORMAT, "boot": boot_id(), "python": sys.executable, "package": origin,
            "package_mtime": stamp}


def read_cache(origin: str, environ: Mapping[str, str] | None = None) -> Verdict | None:
    """The cached verdict for this boot, Python and package, or ``None``."""
    try:
        data = json.loads((cache_dir(environ) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != _cache_key(origin):
        return None
    try:
        return Verdict(ok=bool(data["ok"]), reason=data.get("reason"), fix=data.get("fix"), source="cache",
                       probed_at=data.get("probed_at"), probe_ms=data.get("probe_ms"))
    except KeyError:
        return None


def write_cache(origin: str, verdict: Verdict, environ: Mapping[str, str] | None = None) -> str | None:
    """Record ``verdict``; returns why it could not be written, or ``None``. Never raises."""
    import tempfile

    folder = cache_dir(environ)
    record = {"key": _cache_key(origin), **{k: v for k, v in verdict._asdict().items() if k != "source"}}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".probe-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
        os.replace(tmp, folder / CACHE_FILE)
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    return None


def run_probe(timeout: float = PROBE_TIMEOUT, *, boot: Boot) -> Verdict:
    """Boot a sandbox with ``boot`` and run ``print(6*7)`` in a child process; the result is not cached here."""
    started = time.perf_counter()
    error = boot(timeout)
    ms = (time.perf_counter() - started) * 1000
    if error is None:
        return Verdict(True, source="probe", probed_at=time.time(), probe_ms=round(ms, 1))
    return Verdict(False, f"hyperlight's probe failed: {error}", FIX_PROBE, "probe", time.time(), round(ms, 1))


def precheck_verdict() -> Verdict | None:
    """The first failing cheap check (platform, hypervisor device, software KVM) as a verdict, else ``None``."""
    for check in precheck.checks():
        if not check["ok"]:
            return Verdict(False, check["detail"], check["fix"], "precheck")
    return None


def package_verdict() -> Verdict | None:
    """A verdict when hyperlight's packages are missing, else ``None``."""
    missing = missing_packages()
    if not missing:
        return None
    what = "hyperlight-sandbox is not installed" if "hyperlight_sandbox" in missing else \
        f"hyperlight-sandbox is installed without {', '.join(missing)}"
    return Verdict(False, f"{what} in this Python ({sys.executable})", FIX_INSTALL, "package")


def probe_verdict(refresh: bool = False, environ: Mapping[str, str] | None = None, *, boot: Boot) -> Verdict:
    """The probe's verdict: cached for this boot unless ``refresh``; probes (and caches) when there is none.

    Assumes the packages are installed (see :func:`package_verdict`).
    """
    origin = package_origin() or ""
    if not refresh:
        cached = read_cache(origin, environ)
        if cached is not None:
            return cached
    fresh = run_probe(boot=boot)
    write_cache(origin, fresh, environ)
    return fresh


def verdict(refresh: bool = False, environ: Mapping[str, str] | None = None, *, boot: Boot) -> Verdict:
    """Whether hyperlight runs here: cheap checks first, then the (cached) probe."""
    return precheck_verdict() or package_verdict() or probe_verdict(refresh, environ, boot=boot)


def record_failure(error: str, environ: Mapping[str, str] | None = None) -> None:
    """A run failed to boot a sandbox although the probe had passed: remember that, so ``auto`` stops choosing it."""
    write_cache(package_origin() or "", Verdict(False, f"hyperlight failed to start a sandbox: {error}", FIX_PROBE,
                                                "probe", time.time()), environ)


__all__ = ["Verdict", "verdict", "probe_verdict", "precheck_verdict", "package_verdict", "run_probe", "cache_dir",
           "REQUIREMENT"]
