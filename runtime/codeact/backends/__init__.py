"""Sandbox backends behind one small interface, and the choice between them.

A backend only executes: the runner (``codeact.runner``) owns tools, policy, limits, output and errors, and hands
the backend a :class:`Program`. Adding a backend means one module with one class; nothing else is copied.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from ..errors import BackendUnavailable, UsageError

if TYPE_CHECKING:
    from .program import Backend, Program

NAMES = ("monty", "hyperlight")


class Choice(NamedTuple):
    """Which backend runs, and why (shown by ``run --json`` and ``doctor``)."""

    name: str
    reason: str


def choose(requested: str | None, stamped: str = "auto", environ: Mapping[str, str] | None = None) -> Choice:
    """Resolve the backend: the ``--backend`` flag, then ``CODEACT_BACKEND``, then the stamped answer.

    ``auto`` picks hyperlight only where its probe has shown it boots here; otherwise monty, with the reason.
    """
    env = os.environ if environ is None else environ
    name = requested or env.get("CODEACT_BACKEND") or stamped or "auto"
    if name not in ("auto", *NAMES):
        raise UsageError(f"unknown backend {name!r}; choose one of auto, {', '.join(NAMES)}")
    if name != "auto":
        source = "--backend" if requested else ("CODEACT_BACKEND" if env.get("CODEACT_BACKEND") else "settings")
        return Choice(name, f"{name} chosen by {source}")
    verdict = _hyperlight_verdict()
    if verdict is None:
        return Choice("hyperlight", "auto: hyperlight's probe booted a micro-VM on this machine")
    return Choice("monty", f"auto: monty, because hyperlight cannot run here ({verdict})")


def _hyperlight_verdict() -> str | None:
    """``None`` if hyperlight works here, else why not (cached by the hyperlight backend's probe)."""
    from . import probe  # not the backend module: the cached verdict must cost almost nothing on every run

    return probe.verdict(boot=boot_hyperlight).reason


def boot_hyperlight(timeout: float) -> str | None:
    """Boot a hyperlight sandbox and run ``print(6*7)``: ``None`` if it printed 42, else what went wrong (the probe
    that :mod:`codeact.backends.probe` runs when no verdict is cached)."""
    from .hyperlight import probe_sandbox  # imported only when a probe really runs

    return probe_sandbox(timeout)


def __getattr__(name: str) -> Any:
    # Program and Backend load on first use: the launcher's bootstrap imports codeact.backends.precheck under
    # `python -S`, and this package must then cost only the standard library and codeact.errors.
    if name in ("Backend", "Program"):
        from . import program

        return getattr(program, name)
    raise AttributeError(name)


def load(name: str) -> Backend:
    """An instance of the backend called ``name``; :class:`BackendUnavailable` says how to fix a missing one."""
    if name not in NAMES:
        raise UsageError(f"unknown backend {name!r}; choose one of {', '.join(NAMES)}")
    module = importlib.import_module(f"{__name__}.{name}")
    backend: Backend = module.create()
    return backend


__all__ = ["Backend", "BackendUnavailable", "Choice", "Program", "boot_hyperlight", "choose", "load", "NAMES"]
