"""The checks behind ``codeact doctor``: which backend runs and why, and per-backend checks, each with its fix.

Exit 0 when the backend that would run works, 3 when it does not (2 for a bad backend setting). The template's
checks (copier and its extensions) are reported but do not change the exit code: running programs does not need
copier.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..backends import boot_hyperlight, precheck, probe
from ..errors import EXIT_BACKEND_UNAVAILABLE, EXIT_OK, EXIT_USAGE, UsageError

MONTY_REQUIREMENT = "pydantic-monty==1.6.0"
FIX_MONTY = f"re-run the launcher to re-sync the codeact venv, or: pip install {MONTY_REQUIREMENT}"
FIX_PYTHON = "use Python 3.10 or newer for the codeact venv (the launcher picks one; uv can install it)"
FIX_EXTENSIONS = ("install it beside copier: uv tool install copier --with copier-template-extensions "
                  "(or: pipx inject copier copier-template-extensions)")
FIX_COPIER = "uv tool install copier --with copier-template-extensions (or: pipx install copier && pipx inject " \
             "copier copier-template-extensions)"
HYPERLIGHT_PYTHONS = ((3, 10), (3, 15))  # hyperlight-sandbox 0.8.0 ships cp310 ... cp315 wheels


@dataclass
class Check:
    """One finding. ``ok`` is None for a check that did not apply (skipped)."""

    group: str
    name: str
    ok: bool | None
    detail: str
    fix: str | None = None


@dataclass
class Report:
    backend: str
    reason: str
    works: bool
    checks: list[Check] = field(default_factory=list)
    versions: dict[str, str | None] = field(default_factory=dict)
    exit_code: int = EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {"backend": {"name": self.backend, "reason": self.reason, "works": self.works},
                "exit_code": self.exit_code, "versions": self.versions,
                "checks": [asdict(c) for c in self.checks]}


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _importable(module: str) -> str | None:
    """``None`` if ``module`` imports, else the error."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any import failure is the finding
        return f"{type(exc).__name__}: {exc}"
    return None


# --- monty --------------------------------------------------------------------------------------------------------

def monty_checks() -> list[Check]:
    group = "monty"
    checks = [_python_check(group, (3, 10), None)]
    libc = precheck.glibc_version()
    if sys.platform.startswith("linux") and libc is not None and libc < (2, 28):
        checks.append(Check(group, "platform", False, f"glibc {libc[0]}.{libc[1]}: pydantic-monty's wheels need "
                                                      "2.28 (or musl)", "use a newer Linux, or a musl-based one"))
    else:
        checks.append(Check(group, "platform", True, f"{sys.platform} {_machine()}: wheels exist"))
    version = _version("pydantic-monty-client") or _version("pydantic-monty")
    if version is None:
        checks.append(Check(group, "package", False, "pydantic-monty is not installed in this Python", FIX_MONTY))
        return checks
    error = _importable("pydantic_monty")
    if error:
        checks.append(Check(group, "package", False, f"pydantic-monty {version} does not import: {error}", FIX_MONTY))
        return checks
    checks.append(Check(group, "package", True, f"pydantic-monty {version} imports"))
    checks.append(monty_smoke())
    return checks


def monty_smoke() -> Check:
    """Run ``6*7`` in monty: the backend really works, worker process included."""
    started = time.perf_counter()
    try:
        import pydantic_monty as pm

        with pm.Monty() as pool, pool.checkout(limits={"max_feed_duration_secs": 10.0}) as session:
            value = session.feed_run("6*7")
    except Exception as exc:  # noqa: BLE001 - the finding
        return Check("monty", "run", False, f"running 6*7 failed: {type(exc).__name__}: {exc}", FIX_MONTY)
    ms = (time.perf_counter() - started) * 1000
    if value != 42:
        return Check("monty", "run", False, f"6*7 gave {value!r}", FIX_MONTY)
    return Check("monty", "run", True, f"ran 6*7 -> 42 in {ms:.0f} ms")


def cpu_check(environ: Mapping[str, str]) -> Check:
    """Whether a run keeps its host loop and the worker on one CPU (codeact.backends.cpu): a tool call costs several
    times more without it on a machine with several CPUs."""
    if environ.get("CODEACT_PIN_CPU") == "0":
        return Check("monty", "cpu", None, "CPU pinning is off (CODEACT_PIN_CPU=0): each tool call pays cross-CPU "
                                           "wake-ups (several times the CPU a call takes)")
    if not hasattr(os, "sched_getaffinity"):
        return Check("monty", "cpu", None, f"CPU pinning is Linux-only; not used on {sys.platform}")
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2:
        return Check("monty", "cpu", None, "one CPU available: nothing to pin")
    return Check("monty", "cpu", True, f"a run keeps its loop and the worker on one of {cpus} CPUs; tools that start "
                                       "processes get them all (CODEACT_PIN_CPU=0 turns it off)")


# --- hyperlight ---------------------------------------------------------------------------------------------------

def hyperlight_checks(refresh: bool = False, environ: Mapping[str, str] | None = None) -> list[Check]:
    group = "hyperlight"
    checks = [_python_check(group, *HYPERLIGHT_PYTHONS)]
    for item in precheck.checks():
        checks.append(Check(group, item["name"], item["ok"], item["detail"], item["fix"]))
    installed = hyperlight_package_check()
    checks.append(installed)
    if installed.ok:
        checks.append(probe_check(refresh, environ))
    else:
        checks.append(Check(group, "probe", None, "skipped: hyperlight-sandbox is not installed"))
    checks.append(cache_check(environ))
    return checks


def hyperlight_package_check() -> Check:
    versions = {d: _version(d) for d in ("hyperlight-sandbox", "hyperlight-sandbox-backend-wasm",
                                         "hyperlight-sandbox-python-guest")}
    missing = [d for d, v in versions.items() if v is None]
    if "hyperlight-sandbox" in missing:
        return Check("hyperlight", "package", False, "hyperlight-sandbox is not installed in this Python "
                                                     f"({sys.executable})", probe.FIX_INSTALL)
    if missing:
        return Check("hyperlight", "package", False, f"hyperlight-sandbox is installed without {', '.join(missing)}",
                     probe.FIX_INSTALL)
    for module in ("hyperlight_sandbox", "hyperlight_sandbox_backend_wasm"):
        error = _importable(module)
        if error:
            return Check("hyperlight", "package", False, f"{module} does not import: {error}", probe.FIX_INSTALL)
    return Check("hyperlight", "package", True, f"hyperlight-sandbox {versions['hyperlight-sandbox']} "
                                                "(wasm backend, Python guest) imports")


def probe_check(refresh: bool, environ: Mapping[str, str] | None = None) -> Check:
    verdict = probe.probe_verdict(refresh, environ, boot=boot_hyperlight)
    when = ""
    if verdict.source == "cache" and verdict.probed_at:
        age = max(0.0, time.time() - verdict.probed_at)
        ago = f"{age / 60:.0f} min" if age >= 60 else f"{age:.0f} s"
        when = f" (cached from a probe {ago} ago; --refresh probes again)"
    elif verdict.probe_ms is not None:
        when = f" (probed now, {verdict.probe_ms:.0f} ms)"
    if verdict.ok:
        return Check("hyperlight", "probe", True, f"booted a micro-VM and ran print(6*7){when}")
    return Check("hyperlight", "probe", False, f"{verdict.reason}{when}", verdict.fix)


def cache_check(environ: Mapping[str, str] | None = None) -> Check:
    folder = probe.cache_dir(environ)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("hyperlight", "cache", False, f"cannot write the probe cache in {folder}: "
                                                   f"{exc.strerror or exc}",
                     "make it writable, or point XDG_CACHE_HOME at a writable folder (without it every run "
                     "probes again)")
    return Check("hyperlight", "cache", True, f"probe cache folder {folder} is writable")


# --- shared -------------------------------------------------------------------------------------------------------

def _machine() -> str:
    import platform

    return platform.machine() or "?"


def _python_check(group: str, lowest: tuple[int, int], highest: tuple[int, int] | None) -> Check:
    have = sys.version_info[:2]
    text = f"Python {sys.version.split()[0]} ({sys.executable})"
    if have < lowest:
        return Check(group, "python", False, f"{text}: needs {lowest[0]}.{lowest[1]} or newer", FIX_PYTHON)
    if highest and have > highest:
        return Check(group, "python", False, f"{text}: no wheels newer than {highest[0]}.{highest[1]}",
                     f"use Python {lowest[0]}.{lowest[1]}-{highest[0]}.{highest[1]} for the codeact venv")
    return Check(group, "python", True, text)


# --- template -----------------------------------------------------------------------------------------------------

# `python -c` puts the current folder (the repository, which programs and pull requests write) first on sys.path:
# the query drops it before it imports anything.
_COPIER_QUERY = ("import sys\ndel sys.path[0]\nimport importlib.metadata as m, json\n"
                 "try:\n    v = m.version('copier')\nexcept m.PackageNotFoundError:\n    v = None\n"
                 "try:\n    import copier_template_extensions\n    e = None\n"
                 "except Exception as x:\n    e = type(x).__name__ + ': ' + str(x)\n"
                 "print(json.dumps({'copier': v, 'extensions_error': e}))\n")


def copier_python(which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The Python interpreter the ``copier`` command runs with (from its script's first line), if found."""
    script = which("copier")
    if not script:
        return None
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if first.startswith("#!"):
        interpreter = first[2:].strip().split()[0] if first[2:].strip() else ""
        if interpreter and os.path.basename(interpreter).startswith("python") and Path(interpreter).exists():
            return interpreter
    return None


def query_copier(python: str | None) -> dict[str, Any]:
    """Copier's version and whether copier-template-extensions imports, asked of ``python`` (else this one)."""
    try:
        out = subprocess.run([python or sys.executable, "-c", _COPIER_QUERY], capture_output=True, text=True,
                             timeout=20, check=False)
        answer: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return answer
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {"copier": None, "extensions_error": "could not ask copier's Python"}


def template_checks() -> tuple[list[Check], str | None]:
    """The copier checks, and copier's version."""
    group = "template"
    python = copier_python()
    on_path = shutil.which("copier") is not None
    found = query_copier(python)
    where = f" (copier's Python: {python})" if python else ("" if on_path else " (no copier on PATH; this Python)")
    if not found.get("copier"):
        return [Check(group, "copier", False, f"copier is not installed{where}", FIX_COPIER),
                Check(group, "extensions", None, "skipped: no copier")], None
    checks = [Check(group, "copier", True, f"copier {found['copier']}{where}")]
    if found.get("extensions_error"):
        checks.append(Check(group, "extensions", False, "copier-template-extensions is not importable beside copier "
                                                        f"({found['extensions_error']})", FIX_EXTENSIONS))
    else:
        checks.append(Check(group, "extensions", True, "copier-template-extensions imports beside copier"))
    return checks, str(found["copier"])


def stamp_checks(project: Path | None = None) -> list[Check]:
    """The install this runtime belongs to, as git sees it: stamped at the repository's top level (repo scope), and
    no owned file hidden by the repository's ignore rules."""
    from ..core.boundary import running_install
    from ..layout import scope_of
    from .gitrules import ignored_fix, ignored_owned, top_level

    group = "stamp"
    project = project or running_install()
    if project is None:
        return []
    top = top_level(project)
    if top is None:
        return [Check(group, "git", False if scope_of(project) == "repo" else None,
                      f"{project} is not in a git work tree", "git init, then commit the stamp")]
    from .interrupted import interrupted

    checks = []
    cut_short = interrupted(project)
    checks.append(Check(group, "update", not cut_short, cut_short.split(";")[0] if cut_short
                        else "no update was cut short", cut_short.split("recover: ", 1)[-1] if cut_short else None))
    if scope_of(project) == "repo" and top != project.resolve():
        checks.append(Check(group, "top level", False, f"stamped in {project}, a subfolder of the repository {top}: "
                            "the Copilot CLI reads .github/ only at the top level",
                            f"uninstall here (`{project}/.codeact/bin/codeact uninstall`), then stamp from {top}"))
    from .update import missing_seeded

    checks += [Check(group, "seeded", False, f"{rel} is missing (it is yours: no update re-creates it)", fix)
               for rel, fix in missing_seeded(project)]
    hidden = ignored_owned(project)
    checks += [Check(group, "ignored", False, f"{path} is ignored by git", ignored_fix(path, rule))
               for path, rule in hidden]
    if not hidden:
        checks.append(Check(group, "ignored", True, "no file of the stamp is hidden by the ignore rules"))
    return checks


# --- the report ---------------------------------------------------------------------------------------------------

def collect(refresh: bool = False, environ: Mapping[str, str] | None = None, *, template: bool = True) -> Report:
    """Run every check and decide which backend would run (as ``codeact run`` decides it)."""
    from .. import backends
    from ..core.config import Settings

    env = os.environ if environ is None else environ
    # the hyperlight probe runs before choose(), so choose() reads a fresh verdict
    checks = monty_checks() + [cpu_check(env)] + hyperlight_checks(refresh, env)
    copier = None
    if template:
        found, copier = template_checks()
        checks += found + stamp_checks()
    versions = {"codeact": __version__, "python": sys.version.split()[0],
                "pydantic-monty": _version("pydantic-monty-client") or _version("pydantic-monty"),
                "hyperlight-sandbox": _version("hyperlight-sandbox"), "copier": copier}
    try:
        choice = backends.choose(None, Settings.load().backend, env)
    except UsageError as exc:
        return Report("?", str(exc), False, checks, versions, EXIT_USAGE)
    failing = [c for c in checks if c.group == choice.name and c.ok is False]
    if choice.name == "hyperlight":
        verdict = probe.verdict(False, env, boot=boot_hyperlight)
        works = verdict.ok
        reason = choice.reason if works else f"{choice.reason}, but it cannot run here: {verdict.explain()}"
    else:
        works = not failing
        reason = choice.reason
    return Report(choice.name, reason, works, checks, versions, EXIT_OK if works else EXIT_BACKEND_UNAVAILABLE)
