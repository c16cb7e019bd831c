"""The pydantic-monty backend: a Rust interpreter of a Python subset in a worker process.

Tool calls are served by the manual ``feed_start``/``resume`` loop (the fastest host-call path Monty offers).
Anything the program asks of the OS (files, environment, imports Monty does not ship) is refused here.
"""
from __future__ import annotations

import builtins
import os
import re
import sys
from typing import Any

from ..errors import BackendUnavailable, ErrorInfo, ProgramError
from . import Program
from .cpu import OneCpu

try:
    import pydantic_monty as _pm
except ImportError as exc:  # pragma: no cover - exercised by doctor on a broken venv
    _pm = None
    _IMPORT_ERROR = exc

# Type-check findings that mean the program calls a tool or a name wrongly. Others (the checker's builtins are
# incomplete, e.g. FileNotFoundError is unknown to it) are not worth refusing a program for.
_BLOCKING = {"missing-argument", "unknown-argument", "too-many-positional-arguments", "invalid-argument-type",
             "parameter-already-assigned", "unresolved-reference", "unresolved-attribute", "call-non-callable"}
_DIAGNOSTIC = re.compile(r"^error\[(?P<code>[\w-]+)\]: (?P<msg>.*)\n\s*--> main\.py:(?P<line>\d+)", re.M)
_BUILTIN_NAMES = set(dir(builtins))

_LIMIT_MESSAGES = [
    (re.compile(r"^TimeoutError: feed time limit"), "TimeoutError",
     "the program ran longer than the {timeout:g} s time limit (raise it with --timeout)"),
    (re.compile(r"^MemoryError"), "MemoryError",
     "the program used more than the {memory_mib:g} MiB memory limit (CODEACT_MEMORY raises it)"),
    (re.compile(r"^RuntimeError: suspension limit"), "LimitExceeded",
     "the program made more than {tool_calls} tool calls (CODEACT_TOOL_CALLS raises it)"),
]


class MontyBackend:
    """Runs programs in pydantic-monty."""

    name = "monty"

    def __init__(self) -> None:
        if _pm is None:
            raise BackendUnavailable(
                f"pydantic-monty is not importable ({_IMPORT_ERROR}); re-run the launcher to re-sync "
                "its venv, or: pip install pydantic-monty==1.4.0")

    def execute(self, program: Program) -> Any:
        limits = program.limits
        monty_limits = {
            "max_feed_duration_secs": float(limits.timeout),
            "max_memory": int(limits.memory),
            "max_recursion_depth": int(limits.recursion),
            # every host call (tools, refused OS calls, name lookups) is a suspension; leave room above tool_calls
            "max_suspensions": int(limits.tool_calls) + 1000,
        }
        cpu = OneCpu("monty", "tokio-rt-worker", program.pin_cpu)  # the worker binary; the client's I/O threads
        with _pm.Monty(max_processes=1, binary_path=_worker_binary()) as pool:
            try:
                cpu.pin()
                return self._run(pool, program, monty_limits, cpu)
            finally:
                cpu.release()

    def _run(self, pool: Any, program: Program, monty_limits: dict[str, Any], cpu: OneCpu) -> Any:
        for type_check in (True, False):
            try:
                with pool.checkout(limits=monty_limits, type_check=type_check,
                                   type_check_stubs=program.stubs, type_check_format="full") as session:
                    return self._drive(session, program, cpu)
            except _pm.MontyTypingError as exc:
                blocking = _blocking_diagnostic(str(exc), program)
                if blocking:
                    raise ProgramError(blocking) from None
                continue  # only non-blocking findings: run without the checker
            except _pm.MontySyntaxError as exc:
                raise ProgramError(_syntax_error(exc)) from None
            except _pm.MontyRuntimeError as exc:
                raise ProgramError(_runtime_error(exc, program)) from None
        raise AssertionError("unreachable")

    def _drive(self, session: Any, program: Program, cpu: OneCpu) -> Any:
        def printer(_stream: str, text: str) -> None:
            program.on_print(text)

        namespaces = _namespaces(program)
        snap = session.feed_start(program.code, print_callback=printer)
        cpu.pin_workers()  # the worker has started all its threads by now
        while not isinstance(snap, _pm.MontyComplete):
            if isinstance(snap, _pm.NameLookupSnapshot):
                members = namespaces.get(snap.variable_name) if snap.object_id is None else None
                if members is not None:
                    snap = snap.resume(value=_namespace(snap.variable_name, members))
                else:
                    snap = snap.resume()  # an undefined name: NameError in the sandbox
                continue
            name = snap.function_name
            if snap.is_os_function:
                snap = snap.resume(_refuse_os(name, snap.args))
                continue
            tool = program.tools.get(name)
            spawns = tool is not None and not tool.in_process
            if spawns:
                cpu.widen()  # what the tool starts (ripgrep, bash, an MCP server) may use every CPU
            try:
                answer = {"return_value": program.call_tool(name, tuple(snap.args), dict(snap.kwargs))}
            except BaseException as exc:  # noqa: BLE001 - every tool failure is the program's to catch
                answer = {"exception": exc}
            finally:
                if spawns:
                    cpu.narrow()  # before waiting on the worker, whose answer should wake us on its CPU
            snap = snap.resume(answer)
        return snap.output


def _worker_binary() -> str | None:
    """The ``monty`` worker next to this Python (where pydantic-monty-runtime installs it in a venv), so the pool
    need not ask ``sysconfig`` (~1 ms at start-up); ``None`` lets pydantic-monty look (and honours ``MONTY_BIN``)."""
    if os.environ.get("MONTY_BIN"):
        return None
    candidate = os.path.join(os.path.dirname(sys.executable), "monty.exe" if os.name == "nt" else "monty")
    return candidate if os.path.isfile(candidate) else None


def _namespaces(program: Program) -> dict[str, list[str]]:
    """Dotted tools (MCP: ``server.tool``) grouped by namespace; empty, and free, when there are none."""
    groups: dict[str, list[str]] = {}
    for name in program.tools:
        if "." in name:
            space, member = name.split(".", 1)
            groups.setdefault(space, []).append(member)
    return groups


class ToolNamespace:
    """The host object behind a tool namespace; the sandbox shows it as ``ToolNamespace(tool=<function ...>)``."""


def _namespace(space: str, members: list[str]) -> Any:
    """A namespace for the sandbox: a host object whose attributes are external functions NAMED ``space.member``,
    so ``space.member(**kw)`` reaches this loop as a call of ``"space.member"`` and goes through
    ``program.call_tool`` like any tool (one place for accounting, caps and errors)."""
    holder = ToolNamespace()
    for member in members:
        def external(*_args: Any, **_kwargs: Any) -> Any:  # never called: the loop answers the call by name
            raise RuntimeError("answered by the backend loop")
        external.__name__ = external.__qualname__ = f"{space}.{member}"
        setattr(holder, member, external)
    return _pm.ClassInstance(holder, eager_attrs=tuple(members))


def _refuse_os(name: str, args: Any) -> dict[str, Any]:
    if name == "import_stubs":
        return {"return_value": {}}  # no extra modules for the type checker
    if name == "import":
        module = args[0] if args else "?"
        return {"exception": ModuleNotFoundError(f"No module named {module!r} in the sandbox")}
    return {"exception": PermissionError(
        f"{name}: the sandbox has no direct file, environment or network access; use the tools (view, create, "
        "edit, glob, grep, ...) instead")}


def _blocking_diagnostic(report: str, program: Program) -> ErrorInfo | None:
    for match in _DIAGNOSTIC.finditer(report):
        code, msg = match["code"], match["msg"]
        if code not in _BLOCKING:
            continue
        if code == "unresolved-reference":
            name = re.search(r"`([^`]+)`", msg)
            if name and name[1] in _BUILTIN_NAMES:
                continue
        line = int(match["line"])
        return ErrorInfo("TypeError", f"{msg} (line {line}; checked before running, so no tool ran)", line,
                         _hint("TypeError", msg, program))
    return None


def _syntax_error(exc: Any) -> ErrorInfo:
    text = str(exc)
    line = re.search(r"line (\d+)", text)
    return ErrorInfo("SyntaxError", text.splitlines()[-1] if text else "invalid syntax",
                     int(line[1]) if line else None, None)


def _runtime_error(exc: Any, program: Program) -> ErrorInfo:
    text = str(exc).strip()
    for pattern, kind, template in _LIMIT_MESSAGES:
        if pattern.search(text):
            lim = program.limits
            return ErrorInfo(kind, template.format(timeout=lim.timeout, memory_mib=lim.memory / 1048576,
                                                   tool_calls=lim.tool_calls), None, None)
    kind, _, message = text.partition(": ")
    if not message:
        kind, message = "Error", text
    line = None
    try:
        frames = [f for f in exc.traceback() if f.filename != "repl_type_stubs.pyi"]
        if frames:
            line = frames[-1].line
    except Exception:  # noqa: BLE001 - a traceback is a nicety
        pass
    return ErrorInfo(kind, message, line, _hint(kind, message, program))


def _hint(kind: str, message: str, program: Program) -> str | None:
    from ..hints import hint_for  # only when a program fails: its patterns cost ~1 ms to compile

    return hint_for(kind, message, program.tools)


def create() -> MontyBackend:
    return MontyBackend()
