"""The hyperlight backend: each program runs in a micro-VM (hyperlight-sandbox 0.8, CPython compiled to Wasm).

A program is written exactly as for monty: the guest gets the same plain functions (``view(path=...)``,
``github.search(...)``), generated from the tools' schemas, that forward to the host. How a run goes:

1. The program is parsed here (syntax errors are reported without booting anything) and, when it ends with an
   expression, that expression is assigned to ``__codeact_value__`` in place, so every line keeps its number.
2. The guest source is ``_hyperlight_guest.py`` + generated tool functions + ``_run(<program>, ...)``.
3. A child process (``_hyperlight_child.py``) creates the sandbox, registers one proxy per tool with
   ``register_tool`` and runs the guest source; each tool call comes back to this process over a pipe and is
   served by ``program.call_tool`` (the runner's dispatcher: policy, caps, accounting all stay there).
4. At the deadline the child is killed: the library itself has no time limit.

Each run gets a new child and a new sandbox, so no run sees another's globals; a warm worker that reused one
would have to ``restore()`` a snapshot between runs. Errors keep the program's own line numbers (the program is
compiled under ``<program>`` inside the guest, apart from the generated prelude, so there is no offset to undo).

Nothing from hyperlight is imported in this process; ``unavailable_reason()`` reads a cached verdict
(see :mod:`codeact.backends.probe`).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import keyword
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.hints import hint_for
from ..core.limits import Limits, MiB
from ..core.tool import Tool
from ..errors import BackendUnavailable, ErrorInfo, ProgramError
from ..pyast import parse
from . import probe
from .program import Program

HERE = Path(__file__).resolve().parent
CHILD = HERE / "_hyperlight_child.py"
GUEST = HERE / "_hyperlight_guest.py"
FACTORY = "hyperlight_sandbox:Sandbox"
GUEST_MODULE = "python_guest.path"  # the Python guest package's module that copies the AOT file into a cache
GUEST_AOT = "python-sandbox.aot"
FINISH = "codeact_finish"  # the internal tool the guest reports its outcome through (see _hyperlight_guest.py)
VALUE = "__codeact_value__"
# The library's defaults, which are also the least the Python guest needs (Windows' Hyper-V needs more).
MIN_HEAP, STACK_MIB = (400 * MiB, 200) if sys.platform == "win32" else (25 * MiB, 35)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

TIMEOUT_MESSAGE = "the program ran longer than the {timeout:g} s time limit (raise it with --timeout)"
MEMORY_MESSAGE = "the program used more than the {memory_mib:g} MiB memory limit (CODEACT_MEMORY raises it)"


def unavailable_reason(refresh: bool = False) -> str | None:
    """``None`` if hyperlight runs here, else why not; cached per boot, so cheap after the first call."""
    return probe.verdict(refresh, boot=probe_sandbox).reason


class HyperlightBackend:
    """Runs programs in a hyperlight micro-VM, one child process per run.

    ``factory`` (``"module:Class"``) and ``path`` (folders the child adds to ``sys.path``) name the sandbox class;
    tests pass a stand-in that executes the guest source in plain Python.
    """

    name = "hyperlight"

    def __init__(self, factory: str = FACTORY, path: list[str] | None = None) -> None:
        self.factory, self.path = factory, list(path or [])

    def execute(self, program: Program) -> Any:
        source, has_value = rewrite_last_expression(program.code)
        registered = registration_names(program.tools)
        request = {
            "factory": self.factory,
            "path": self.path,
            "options": sandbox_options(program.limits) if self.factory == FACTORY else {},
            "tools": [[registered[name], name] for name in program.tools],
            "code": guest_source(source, has_value, program.tools, registered, program.limits),
        }
        run = _ChildRun(request)
        try:
            return self._serve(run, program)
        finally:
            run.close()

    def _serve(self, run: _ChildRun, program: Program) -> Any:
        limits = program.limits
        deadline = time.monotonic() + limits.timeout
        printed = 0
        started = False  # the guest has called the host at least once
        outcome: dict[str, Any] | None = None
        while True:
            message = run.receive(deadline)
            if message is None:  # deadline passed: the child is killed by close()
                raise ProgramError(ErrorInfo("TimeoutError", TIMEOUT_MESSAGE.format(timeout=limits.timeout)))
            kind = message.get("kind")
            if kind in ("call", "finish"):
                started = True
                payload = _loads(message.get("payload"))
                text = payload.get("stdout") or ""
                if text:
                    program.on_print(text)
                    printed += len(text)
                if kind == "finish":
                    outcome = payload
                    run.send({"value": None})
                else:
                    run.send(_dispatch(program, str(message.get("tool")), payload))
            elif kind == "exit":
                run.finished = True
                break
            else:
                raise self._stopped(message, run, limits, started=started)
        if outcome is None:  # the guest runtime failed before or outside _run (should not happen)
            stdout = str(message.get("stdout") or "")[printed:]
            if stdout:
                program.on_print(stdout)
            kind, _, text = str(message.get("stderr") or "").strip().partition(": ")
            raise ProgramError(ErrorInfo(kind or "RuntimeError", text or "the sandbox failed without a message"))
        if outcome.get("error"):
            raise ProgramError(_error_info(outcome["error"], program))
        return _decode_value(outcome.get("value"))

    def _stopped(self, message: dict[str, Any], run: _ChildRun, limits: Limits, *, started: bool) -> Exception:
        """The error for a child that failed (``kind == "fail"``) or died, before or after the program began."""
        if message.get("kind") == "fail":
            error = str(message.get("error"))
            if message.get("stage") == "create" or "Failed to create sandbox" in error:
                if self.factory == FACTORY:
                    probe.record_failure(condense(error))
                return BootFailed(condense(error))
            if re.search(r"memory", error, re.I):  # the guest ran out of its heap: a trap, not MemoryError
                return ProgramError(ErrorInfo("MemoryError", MEMORY_MESSAGE.format(
                    memory_mib=limits.memory / MiB) + f"; the sandbox stopped: {condense(error)}"))
            return ProgramError(ErrorInfo("RuntimeError", f"the sandbox stopped: {condense(error)}"))
        if started:  # the child died in the middle of the program (a crash of the VM or the runtime)
            return ProgramError(ErrorInfo("RuntimeError", f"the sandbox process died{run.stderr_tail()}"))
        error = f"the worker process exited unexpectedly{run.stderr_tail()}"  # a crash while booting the VM
        if self.factory == FACTORY:
            probe.record_failure(error)
        return BootFailed(error)


class BootFailed(BackendUnavailable):
    """The sandbox could not be created or booted; ``error`` is the library's message."""

    def __init__(self, error: str) -> None:
        missing = error.startswith(("ModuleNotFoundError", "ImportError"))
        super().__init__(f"hyperlight could not start a sandbox: {error}. "
                         f"Fix: {probe.FIX_INSTALL if missing else probe.FIX_PROBE}")
        self.error = error


def create() -> HyperlightBackend:
    """The backend, or :class:`BackendUnavailable` with the reason, the probe's error and the fix."""
    verdict = probe.verdict(boot=probe_sandbox)
    if verdict.ok:
        return HyperlightBackend()
    message = f"hyperlight cannot run here: {verdict.reason}"
    if verdict.source == "precheck" and probe.package_verdict() is None:
        # Say what the real probe saw too (cached per boot, so this costs a probe once).
        seen = probe.probe_verdict(boot=probe_sandbox)
        message += "; yet the probe booted a micro-VM" if seen.ok else f"; {seen.reason}"
    raise BackendUnavailable(f"{message}. Fix: {verdict.fix}. {probe.FIX_REFRESH}.")


def probe_sandbox(timeout: float = probe.PROBE_TIMEOUT, backend: HyperlightBackend | None = None) -> str | None:
    """Boot a sandbox and run ``print(6*7)``; ``None`` if it printed 42, else what went wrong (one line)."""
    printed: list[str] = []
    program = Program(code="print(6*7)", tools={}, stubs="", limits=Limits(timeout=timeout),
                      call_tool=_no_tools, on_print=printed.append)
    try:
        (backend or HyperlightBackend()).execute(program)
    except BootFailed as exc:
        return exc.error
    except ProgramError as exc:
        return f"{exc.info.type}: {exc.info.message}"
    except BackendUnavailable as exc:
        return str(exc).split(". Fix: ")[0]
    except OSError as exc:
        return f"could not start the probe's process: {exc}"
    out = "".join(printed)
    return None if out.strip() == "42" else f"the probe printed {out[:200]!r} instead of '42'"


def _no_tools(name: str, _args: tuple[Any, ...], _kwargs: dict[str, Any]) -> Any:  # a Program.call_tool
    raise NameError(f"name '{name}' is not defined")


# --- the program and the guest source -------------------------------------------------------------------------

def rewrite_last_expression(code: str) -> tuple[str, bool]:
    """``code`` with a final expression statement assigned to ``__codeact_value__``, every line where it was.

    Raises :class:`ProgramError` for a syntax error (with the program's own line number).
    """
    try:
        tree = parse(code, "<program>")
    except SyntaxError as exc:
        raise ProgramError(ErrorInfo("SyntaxError", exc.msg or "invalid syntax", exc.lineno, None)) from None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code, False
    node = tree.body[-1]
    lines = _split_lines(code)
    end_line, end_col = node.end_lineno, node.end_col_offset
    if end_line is None or end_col is None:
        return code, False
    lines[end_line - 1] = _insert(lines[end_line - 1], end_col, ")")
    lines[node.lineno - 1] = _insert(lines[node.lineno - 1], node.col_offset, f"{VALUE} = (")
    return "".join(lines), True


def _split_lines(text: str) -> list[str]:
    """Lines as the parser counts them (``\\n``, ``\\r\\n``, ``\\r``), each with its line break."""
    parts, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        parts.append(text[start:match.end()])
        start = match.end()
    parts.append(text[start:])
    return parts


def _insert(line: str, byte_offset: int, text: str) -> str:
    """Insert ``text`` at ``byte_offset`` (the parser counts UTF-8 bytes) of ``line``."""
    data = line.encode("utf-8", "surrogatepass")
    return data[:byte_offset].decode("utf-8", "surrogatepass") + text + \
        data[byte_offset:].decode("utf-8", "surrogatepass")


def registration_names(tools: Mapping[str, Tool]) -> dict[str, str]:
    """The name each tool is registered under in the sandbox: its own when a plain identifier, else an alias."""
    names: dict[str, str] = {}
    for index, name in enumerate(tools):
        plain = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("codeact_")
        names[name] = name if plain else f"codeact_tool_{index}"
    return names


def _parameters(tool: Tool) -> tuple[list[str], bool]:
    """The keyword parameters to spell out, and whether others are accepted too (``**kwargs``)."""
    props = tool.parameters.get("properties") or {}
    names = list(props)
    if any(not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_") for n in names):
        return [], True
    extra = tool.parameters.get("additionalProperties") not in (False, None)
    return names, extra


def tool_function(tool: Tool, registered: str, function: str) -> str:
    """Guest source of one tool function: keyword arguments only, the host applying the tool's defaults."""
    names, extra = _parameters(tool)
    params = ["*_positional", *(f"{n}=_UNSET" for n in names)] + (["**_extra"] if extra else [])
    given = "{" + ", ".join(f"{n!r}: {n}" for n in names) + "}"
    if extra:
        given = f"{{**{given}, **_extra}}" if names else "_extra"
    return (f"def {function}({', '.join(params)}):\n"
            f"    {tool.description or ''!r}\n"
            f"    return _call({registered!r}, _positional, {given})\n")


def guest_source(code: str, has_value: bool, tools: Mapping[str, Tool], registered: Mapping[str, str],
                 limits: Limits) -> str:
    """The whole text the sandbox runs: the guest driver, one function per tool, then the program."""
    parts = [GUEST.read_text(encoding="utf-8"), "\n# --- generated tool functions ---\n"]
    top: dict[str, str] = {}
    servers: dict[str, dict[str, str]] = {}
    for index, (name, tool) in enumerate(tools.items()):
        server, dot, method = name.partition(".")
        if not dot and name.isidentifier() and not keyword.iskeyword(name):
            parts.append(tool_function(tool, registered[name], name))
            top[name] = name
        elif dot and server.isidentifier() and method.isidentifier() and not keyword.iskeyword(server):
            function = f"_tool_{index}"
            parts.append(tool_function(tool, registered[name], function))
            parts.append(f"{function}.__name__ = {function}.__qualname__ = {method!r}\n")
            servers.setdefault(server, {})[method] = function
        # any other name cannot be spelled in Python; the runner sanitises MCP names before they get here
    entries = [f"{name!r}: {function}" for name, function in top.items()]
    for server, methods in servers.items():
        members = ", ".join(f"{m!r}: {f}" for m, f in methods.items())
        entries.append(f"{server!r}: _Namespace({server!r}, {{{members}}})")
    parts.append(f"\n_run({code!r}, {has_value!r}, {{{', '.join(entries)}}}, {int(limits.recursion)})\n")
    return "".join(parts)


def sandbox_options(limits: Limits, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``Sandbox(...)`` keyword arguments for these limits."""
    heap_mib = max(int(limits.memory), MIN_HEAP) // MiB
    guest = materialised_guest(environ)
    where = {"module_path": guest} if guest else {"module": GUEST_MODULE}
    return {"backend": "wasm", **where, "heap_size": f"{heap_mib}Mi", "stack_size": f"{stack_mib(heap_mib)}Mi"}


def materialised_guest(environ: Mapping[str, str] | None = None) -> str | None:
    """The Python guest's AOT file where ``python_guest`` already copied it, if that copy is current.

    Importing ``python_guest.path`` re-reads and compares its 44 MB guest file on every import; when its cached
    copy has the packaged file's size and is newer than it, the sandbox is pointed at the copy instead.
    """
    env = os.environ if environ is None else environ
    try:
        spec = importlib.util.find_spec("python_guest")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    packaged = Path(list(spec.submodule_search_locations)[0]) / "resources" / GUEST_AOT
    if env.get("XDG_CACHE_HOME"):
        root = Path(env["XDG_CACHE_HOME"])
    elif sys.platform == "win32" and env.get("LOCALAPPDATA"):
        root = Path(env["LOCALAPPDATA"])
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Caches"
    else:
        root = Path.home() / ".cache"
    copy = root / "hyperlight_sandbox_guests" / "python_guest" / GUEST_AOT
    try:
        source, cached = packaged.stat(), copy.stat()
    except OSError:
        return None
    return str(copy) if cached.st_size == source.st_size and cached.st_mtime_ns >= source.st_mtime_ns else None


def stack_mib(heap_mib: int) -> int:
    """The guest's stack/scratch size for a heap: the library refuses one below about min(heap + 1, 68) MiB plus
    page tables (seen with 0.8.0: heap 64 -> 65, 256 -> 68, 1024 -> 69, 4096 -> 76), so leave a margin."""
    return max(STACK_MIB, min(heap_mib + 1, 68) + heap_mib // 512 + 2)


# --- serving the child ----------------------------------------------------------------------------------------

def _dispatch(program: Program, name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Run one tool call through the runner's dispatcher; the answer the guest turns back into a value or error."""
    args = payload.get("args") or []
    kwargs = payload.get("kwargs") or {}
    try:
        value = program.call_tool(name, tuple(args), dict(kwargs))
    except Exception as exc:  # noqa: BLE001 - every tool failure is the program's to catch
        return {"error": {"type": type(exc).__name__, "message": str(exc), "args": _plain_args(exc)}}
    return {"value": value}


def _plain_args(exc: BaseException) -> list[Any]:
    try:
        json.dumps(exc.args)
        return list(exc.args)
    except (TypeError, ValueError):
        return [str(exc)]


def _error_info(error: Mapping[str, Any], program: Program) -> ErrorInfo:
    kind = str(error.get("type") or "Error")
    message = str(error.get("message") or "")
    line = error.get("line") if isinstance(error.get("line"), int) else None
    if kind == "MemoryError":
        return ErrorInfo(kind, MEMORY_MESSAGE.format(memory_mib=program.limits.memory / MiB), None, None)
    return ErrorInfo(kind, message, line, hint_for(kind, message, program.tools))


class _Repr:
    """A value that was not JSON in the guest: shown by its ``repr`` (as the runner shows such values from monty)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _decode_value(encoded: Any) -> Any:
    if not isinstance(encoded, dict):
        return None
    if "json" in encoded:
        return json.loads(encoded["json"])
    return _Repr(str(encoded.get("repr")))


def _loads(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def condense(error: str, limit: int = 400) -> str:
    """The library's error on one line, its nested causes listed once (they repeat: "A: B: C: B: C")."""
    line = error.strip().splitlines()[0] if error.strip() else "no message"
    seen: list[str] = []
    for part in line.split(": "):
        if part in seen:
            break
        seen.append(part)
    text = ": ".join(seen)
    return text if len(text) <= limit else text[:limit] + "..."


class _ChildRun:
    """One child process and the line-based channel to it; ``close()`` kills it if it is still running."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.finished = False  # the child said it is done: let it exit by itself
        self._stderr = tempfile.TemporaryFile()
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._reader = threading.Thread(target=self._read, name="hyperlight-child-reader", daemon=True)
        self._reader.start()
        self.send(request)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self._lines.put(line)
        self._lines.put(None)

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        data = (json.dumps(message, ensure_ascii=True, default=str) + "\n").encode("ascii")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child has gone; receive() reports it

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message; ``{}`` if the child ended without one; ``None`` once ``deadline`` has passed."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        try:
            line = self._lines.get(timeout=remaining)
        except queue.Empty:
            return None
        if line is None:
            return {}
        message = _loads(line.decode("ascii", "replace"))
        return message

    def stderr_tail(self, limit: int = 400) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return f" ({text[-limit:]})" if text else ""

    def close(self) -> None:
        if self.finished:
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill that did not take
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()


__all__ = ["HyperlightBackend", "create", "unavailable_reason", "probe_sandbox", "rewrite_last_expression",
           "guest_source"]
