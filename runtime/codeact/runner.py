"""The run loop: one program, the tools it may call, the limits it runs under, the result it gives back."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from . import backends
from .cmdline import program_too_large
from .core import notices
from .core.boundary import Workspace, find_workspace
from .core.config import Settings, load_user_config
from .core.limits import Deadline, Limits, truncate, within
from .core.outputs import KEEP_PRINTED, jsonable
from .core.stubs import stub_source
from .core.tool import Cut, Tool, ToolContext
from .core.toolset import named_in
from .errors import BackendUnavailable, ErrorInfo, PolicyError, ProgramError, ToolError, ToolTimeout, UsageError
from .tools.assemble import assemble

# Imports inside functions are lazy (start-up cost): a session's globals and a watchdog thread only when a run asks.

# Exceptions that reach the program as themselves; anything else arrives as RuntimeError with its message.
_PASS_THROUGH = (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError,
                 ValueError, TypeError, KeyError, TimeoutError, LookupError)


class ToolCall(NamedTuple):
    """One tool call of a run: the tool, whether it returned, how long it took (one made per call: a frozen
    dataclass costs more to make)."""

    tool: str
    ok: bool
    ms: float


class RunResult(NamedTuple):
    """What a run produced; ``to_json()`` is the shape ``codeact run --json`` prints."""

    ok: bool
    backend: str
    stdout: str
    result: Any = None
    error: ErrorInfo | None = None
    tool_calls: list[ToolCall] | tuple[ToolCall, ...] = ()
    duration_ms: float = 0.0
    backend_reason: str = ""
    notes: list[str] | tuple[str, ...] = ()  # what the model must know: cut tool results, type-check findings
    stderr: str = ""  # what the program printed to sys.stderr

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "backend": self.backend,
            "backend_reason": self.backend_reason,
            "stdout": self.stdout,
            "result": jsonable(self.result),
            "error": self.error.to_json() if self.error else None,
            "tool_calls": [{"tool": c.tool, "ok": c.ok, "ms": round(c.ms, 3)} for c in self.tool_calls],
            "duration_ms": round(self.duration_ms, 3),
            "notes": list(self.notes),
            "stderr": self.stderr,
        }


class _Output:
    """Everything the program printed, up to what the output store keeps (``outputs.KEEP_PRINTED``); the rest is
    counted and reported at the end. What the model is shown is cut later, to ``Limits.output`` (codeact.core.outputs)."""

    def __init__(self, keep: int) -> None:
        self.parts: list[str] = []
        self.keep, self.size, self.dropped = keep, 0, 0

    def write(self, text: str) -> None:
        data = len(text.encode("utf-8", "surrogatepass"))
        room = self.keep - self.size
        if data <= room:
            self.parts.append(text)
            self.size += data
        else:
            if room > 0:
                self.parts.append(text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore"))
                self.size = self.keep
            self.dropped += data - max(room, 0)

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n... [{self.dropped} more bytes printed were not kept (at most {self.keep} are); print less]\n"
        return out


def run(code: str, *, workspace: Path | str | None = None, backend: str | None = None,
        tools: Mapping[str, Tool] | None = None, limits: Limits | None = None,
        settings: Settings | None = None, environ: Mapping[str, str] | None = None,
        backend_impl: backends.Backend | None = None, session: str | None = None) -> RunResult:
    """Run ``code`` in the sandbox and return what it printed, its last value and any error.

    ``tools`` defaults to everything the settings, the user's config and the environment enable;
    ``backend_impl`` lets tests pass a fake backend.
    Raises :class:`BackendUnavailable` when the chosen backend cannot run here, :class:`UsageError` on bad input.
    """
    started = time.perf_counter()
    too_large = program_too_large(code)
    if too_large is not None:  # before anything parses it: the host's parse holds the interpreter, past any deadline
        return RunResult(ok=False, backend=backend_impl.name if backend_impl is not None else backend or "",
                         stdout="", error=ErrorInfo("SyntaxError", too_large),
                         duration_ms=(time.perf_counter() - started) * 1000)
    env = os.environ if environ is None else environ
    settings = settings or Settings.load()
    limits = limits or Limits.from_env(env)
    space = Workspace.at(workspace or find_workspace(), allow_secrets=env.get("CODEACT_ALLOW_SECRETS") == "1",
                         environ=env)
    clock = Deadline(limits.timeout)  # every tool call ends by it (started when the program starts)
    if tools is None:
        tools = _default_tools(space, limits, settings, env, clock, code)
    choice, backend_impl = _backend_for(backend, backend_impl, settings, env)

    output = _Output(KEEP_PRINTED)
    errors = _Output(KEEP_PRINTED // 8)  # print(..., file=sys.stderr)
    notes = notices.Notes()  # tools say here what they did not return (codeact.core.notices)
    dispatch = _ToolDispatch(tools, limits, clock, space, notes)
    clock.start()  # from here: a first MCP discovery is not the program's time

    kept: dict[str, Any] = {}
    state = _session_state(session, choice, space, env, limits, notes.add)
    program = backends.Program(code=code, tools=tools, stubs=stub_source(named_in(tools, code)), limits=limits,
                               call_tool=dispatch, on_print=output.write,
                               pin_cpu=env.get("CODEACT_PIN_CPU") != "0", on_note=notes.add,
                               state=state, on_state=kept.update if session is not None else None, workspace=space,
                               on_print_err=errors.write)
    result, error = _execute(backend_impl, program, space, clock, notes, dispatch.interrupted)
    if dispatch.interrupted:
        raise KeyboardInterrupt
    if session is not None and error is None:
        from .core import sessions
        note = sessions.save(space.root, session, kept, env, memory=int(limits.memory))
        if note:
            notes.add(note)
    return RunResult(ok=error is None, backend=choice.name, stdout=output.text(), result=result, error=error,
                     tool_calls=dispatch.calls, duration_ms=(time.perf_counter() - started) * 1000,
                     backend_reason=choice.reason, notes=notes.shown(), stderr=errors.text())


def _default_tools(space: Workspace, limits: Limits, settings: Settings, env: Mapping[str, str],
                   clock: Deadline, code: str) -> Mapping[str, Tool]:
    """Every tool the settings, the user's config and the environment enable, bound to this run of ``code``."""
    user_config = load_user_config(env)
    ctx = ToolContext(workspace=space, limits=limits, allow_hosts=tuple(user_config.get("allow_hosts", ())),
                      environ=dict(env), deadline=clock)
    return assemble(ctx, settings, env, user_config=user_config, program=code)


def _backend_for(backend: str | None, backend_impl: backends.Backend | None, settings: Settings,
                 env: Mapping[str, str]) -> tuple[backends.Choice, backends.Backend]:
    """The backend that runs the program and why: the caller's own, or the one asked for or chosen here."""
    if backend_impl is not None:
        return backends.Choice(backend_impl.name, "given by the caller"), backend_impl
    choice = backends.choose(backend, settings.backend, env)
    return choice, backends.load(choice.name)


def _session_state(session: str | None, choice: backends.Choice, space: Workspace, env: Mapping[str, str],
                   limits: Limits, on_note: Callable[[str], None]) -> dict[str, Any] | None:
    """The globals ``--session`` kept for this program (``None`` without a session); UsageError off monty."""
    if session is None:
        return None
    if choice.name != "monty":
        raise UsageError(f"--session needs the monty backend (this run uses {choice.name})")
    from .core import sessions
    return sessions.load(space.root, session, env, memory=int(limits.memory), on_note=on_note)


class _ToolDispatch:
    """The program's ``call_tool``: checks a call against the run's limits, makes it, accounts for it, caps its
    result and turns a failure into the exception the program sees."""

    def __init__(self, tools: Mapping[str, Tool], limits: Limits, clock: Deadline, space: Workspace,
                 notes: notices.Notes) -> None:
        self.tools, self.limits, self.clock, self.space, self.notes = tools, limits, clock, space, notes
        self.calls: list[ToolCall] = []
        self.interrupted: list[BaseException] = []  # Ctrl-C during a tool call: the run stops, whatever it catches

    def __call__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tool = self._admit(name, args)
        # the arguments cross from the sandbox with their sharing kept: written out (a tool's error shows a
        # value, an encoder walks it) `[[[0] * 1000] * 1000] * 1000` is 10**9 items. Past the run's memory, as
        # host modules count their output, the call is refused before any tool sees it.
        from .core.sizes import expanded_size

        size = expanded_size(kwargs, int(self.limits.memory))[0]
        if size > self.limits.memory:
            raise ValueError(f"{name}(): its arguments hold more than {int(self.limits.memory):,} items and "
                             "characters written out (a shared list counts each time it appears), more than the "
                             "run's memory limit allows; pass less")
        t0 = time.perf_counter()
        try:
            value = tool.call(**kwargs) if tool.source != "user" else _call_by_deadline(tool, kwargs, self.clock)
        except BaseException as exc:  # noqa: BLE001 - converted for the program below
            self.calls.append(ToolCall(name, False, (time.perf_counter() - t0) * 1000))
            if isinstance(exc, KeyboardInterrupt):
                self.interrupted.append(exc)
            if isinstance(exc, TimeoutError) and self.clock.expired():  # e.g. an MCP call given the time left
                exc = self.clock.stopped(name)
            raise _for_program(exc, self.space) from None
        self.calls.append(ToolCall(name, True, (time.perf_counter() - t0) * 1000))
        value, dropped = _cap_result(value, self.limits.tool_result)
        if dropped:  # a list keeps its item type; the cut is reported where the model reads the output
            self.notes.add(f"{name}(): returned {len(value)} items; {dropped} more did not fit the "
                           f"{self.limits.tool_result:,} byte tool-result limit and were dropped: narrow the query (or "
                           "raise CODEACT_TOOL_RESULT)")
        return value

    def _admit(self, name: str, args: tuple[Any, ...]) -> Tool:
        """The tool ``name`` names, if the program may call it now; else the error the program sees."""
        tool = self.tools.get(name)
        if tool is None:
            raise NameError(f"name '{name}' is not defined; available tools: {', '.join(sorted(self.tools))}")
        if args:
            params = ", ".join(f"{p}=..." for p in (tool.parameters.get("properties") or {}))
            raise TypeError(f"{name}() takes keyword arguments only; call it as {name}({params})")
        if self.interrupted:
            raise RuntimeError("the run was interrupted (Ctrl-C); no further tool calls")
        if len(self.calls) >= self.limits.tool_calls:
            raise RuntimeError(f"tool call limit of {self.limits.tool_calls} reached (CODEACT_TOOL_CALLS raises it)")
        if self.clock.expired():
            raise TimeoutError(f"the {self.limits.timeout:g} s time limit was reached before calling {name}()")
        return tool


def _execute(backend_impl: backends.Backend, program: backends.Program, space: Workspace, clock: Deadline,
             notes: notices.Notes, interrupted: list[BaseException]) -> tuple[Any, ErrorInfo | None]:
    """The program's last value, or the error it failed with (scrubbed of what the workspace hides)."""
    previous = clock.activate()  # tools given by the caller, with their own ToolContext, see it too
    previous_notes = notes.activate()
    try:
        return backend_impl.execute(program), None
    except ProgramError as exc:
        return None, exc.info._replace(message=space.scrub(exc.info.message))
    except (RecursionError, MemoryError):  # the host's own parsing of a program nested too deeply
        from .backends.program import nesting_error

        nested = nesting_error(program.code)
        if nested is None:
            raise
        return None, nested
    except Exception:
        if interrupted:  # the worker got the same Ctrl-C and died: not a crash to report
            raise KeyboardInterrupt from None
        raise
    finally:
        Deadline.restore(previous)
        notices.restore(previous_notes)


def _call_by_deadline(tool: Tool, kwargs: dict[str, Any], clock: Deadline) -> Any:
    """A user tool's call, given until the run's deadline: it runs in a helper thread, and when the deadline passes
    first the call is abandoned (the thread may finish in the background) and reported as stopped."""
    import threading

    outcome: dict[str, Any] = {}

    def target() -> None:
        previous = clock.activate()
        try:
            outcome["value"] = tool.call(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the run's thread
            outcome["error"] = exc
        finally:
            Deadline.restore(previous)

    worker = threading.Thread(target=notices.carried(target), name=f"codeact-tool-{tool.name}", daemon=True)
    worker.start()
    worker.join(clock.remaining())
    if worker.is_alive():
        raise clock.stopped(tool.name, "running the user tool")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _for_program(exc: BaseException, space: Workspace) -> BaseException:
    message = space.scrub(str(exc))
    if isinstance(exc, PolicyError):
        return PermissionError(message)
    if isinstance(exc, ToolTimeout):
        return TimeoutError(message)
    if isinstance(exc, ToolError):
        return RuntimeError(message)
    if isinstance(exc, (NameError, *_PASS_THROUGH)):
        return type(exc)(message)
    if isinstance(exc, OSError):
        return OSError(message)
    return RuntimeError(f"{type(exc).__name__}: {message}")


def _cap_result(value: Any, cap: int) -> tuple[Any, int]:
    """``value`` cut to about ``cap`` bytes, and how many list items were dropped (strings say so in the text)."""
    if isinstance(value, Cut):  # a list the tool already cut, never holding more than it could return
        if value.within is not None and value.within <= cap:  # already sized as counted here: no second count
            return list(value), value.dropped
        extra, value = value.dropped, list(value)
        value, dropped = _cap_result(value, cap)
        return value, dropped + extra
    if isinstance(value, str):  # a character is at most 4 UTF-8 bytes: most results need no encoding to measure
        return (value if len(value) <= cap >> 2 else truncate(value, cap)), 0
    if isinstance(value, list) and value and not within(value, cap)[1]:  # never encoded whole (it may be huge)
        keep, total = [], 0
        for item in value:
            text, whole, _ = within(item, cap - total)
            total += len(text) + 2
            if not whole or total > cap:
                break
            keep.append(item)
        return keep, len(value) - len(keep)
    return value, 0


__all__ = ["RunResult", "ToolCall", "run", "BackendUnavailable"]
