"""Sandbox backends behind one small interface, and the choice between them.

A backend only executes: the runner (``codeact.core.runner``) owns tools, policy, limits, output and errors, and hands
the backend a :class:`Program`. Adding a backend means one module with one class; nothing else is copied.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable, Mapping, NamedTuple, Protocol

from ..errors import BackendUnavailable, UsageError
from ..core.limits import Limits
from ..tools.base import Tool

NAMES = ("monty", "hyperlight")


class Program(NamedTuple):
    """Everything a backend needs to run one program."""

    code: str
    tools: Mapping[str, Tool]  # by the name the program calls ("view", "server.tool")
    stubs: str  # type-check stubs of ``tools``
    limits: Limits
    call_tool: Callable[[str, tuple[Any, ...], dict[str, Any]], Any]  # the runner's dispatcher; raises on failure
    on_print: Callable[[str], None]  # receives printed text as it is produced
    pin_cpu: bool = True  # a backend with a worker process may keep it and this process on one CPU
    on_note: Callable[[str], None] | None = None  # receives type-check notes (shown after the run, never refused)


class Backend(Protocol):
    """Runs a :class:`Program` and returns the value of its last expression (``None`` if there is none).

    Raises :class:`codeact.errors.ProgramError` when the program fails, with the error as the model should see it.
    """

    name: str

    def execute(self, program: Program) -> Any: ...


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

    return probe.verdict().reason


def load(name: str) -> Backend:
    """An instance of the backend called ``name``; :class:`BackendUnavailable` says how to fix a missing one."""
    if name not in NAMES:
        raise UsageError(f"unknown backend {name!r}; choose one of {', '.join(NAMES)}")
    module = importlib.import_module(f"{__name__}.{name}")
    backend: Backend = module.create()
    return backend


__all__ = ["Backend", "BackendUnavailable", "Choice", "Program", "choose", "load", "NAMES"]
