"""The MCP session pool: one session per server for a run, or for every run of the warm server.

:class:`SessionPool` gives a run ONE session per server, opened on first use (:func:`codeact.mcp.sessions.
open_session`) and closed when the pool closes. Every session of this process lives on one asyncio event loop run by
one daemon thread (:class:`_LoopThread`); a run's thread submits each call to it and waits for the answer
(:func:`asyncio.run_coroutine_threadsafe`), so runs on several threads call through it at once with no hand-off of
their own. The thread keeps every CPU the process has: a server a call starts is spawned from it.

On the warm server (:func:`share_sessions`) the sessions outlive the run: one pool state per working folder and
environment (a local server inherits the environment of the run that started it), shared by the runs that match,
reopened by the next run when one died, stopped when idle or with the server. The environment is compared without
the variables a shell changes by itself and no server is meant to read (:data:`SHELL_VARIABLES`): a ``cd`` between
two runs starts no server, while any other change (a token, ``PYTHONPATH``) starts the servers again in that
environment, and the sessions it replaced are closed once no run uses them.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ..processes import children, process_running
from .config import ServerConfig
from .results import not_supported, resource_contents, result_value
from .sessions import (
    DEFAULT_CONNECT_TIMEOUT,
    MCPError,
    RunOutOfTime,
    ServerUnavailable,
    describe_failure,
    is_connection_closed,
    is_request_timeout,
    open_session,
    stderr_tail,
)

if TYPE_CHECKING:
    from mcp import ClientSession

T = TypeVar("T")

PROGRESS_EVERY = 5.0  # seconds between "still waiting for the server" lines on stderr
_CLOSE_TIMEOUT = 10.0  # seconds the pool waits for every session to shut down
# Variables a shell sets by itself at a `cd`, a nested shell or each command, which no server is meant to read: a
# change in them keeps the warm server's sessions (docs/mcp.md lists them).
SHELL_VARIABLES = frozenset({"OLDPWD", "PWD", "SHLVL", "_", "COLUMNS", "LINES"})

_UNKNOWN: Any = object()  # SessionPool.call: no output schema given (the SDK lists the tools to learn it)


class _LoopThread:
    """One asyncio event loop, run by a daemon thread for the life of the process: every MCP session lives on it."""

    def __init__(self) -> None:
        from ..backends.cpu import all_cpus

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="codeact-mcp", daemon=True)
        with all_cpus():  # a pinned run's thread makes it: the servers it spawns get every CPU, not the run's one
            self.thread.start()

    def here(self) -> bool:
        return threading.current_thread() is self.thread

    def submit(self, coro: Coroutine[Any, Any, T], progress: Callable[[float], str | None] | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result in the calling thread; ``progress(seconds)``, asked
        every :data:`PROGRESS_EVERY` seconds, gives a line to print on stderr meanwhile (the caller's stderr: the
        warm server routes each run's prints by thread). An interrupt cancels the call."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        began = time.monotonic()
        try:
            while True:
                try:
                    return future.result(timeout=PROGRESS_EVERY if progress is not None else None)
                except concurrent.futures.TimeoutError:
                    if future.done():  # the call's own TimeoutError (the same class since Python 3.11)
                        raise
                    line = progress(time.monotonic() - began) if progress is not None else None
                    if line:
                        print(line, file=sys.stderr, flush=True)
        except BaseException:
            future.cancel()
            raise


_LOOP: _LoopThread | None = None
_LOOP_LOCK = threading.Lock()


def _loop_thread() -> _LoopThread:
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or not _LOOP.thread.is_alive():
            _LOOP = _LoopThread()
        return _LOOP


@dataclass
class _Connection:
    config: ServerConfig
    errlog: TextIO | None
    ready: asyncio.Future[ClientSession] = field(default=None)  # type: ignore[arg-type]  # set at start; resolves to the session
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    dead: ServerUnavailable | None = None
    pid: int | None = None  # a local server's process (diagnostics: `codeact server status`)
    last_used: float = 0.0


class _PoolState:
    """Everything the pool owns and does, kept apart from :class:`SessionPool` so that the running session tasks
    never reference the pool object: dropping the pool (the end of a run) then closes every session."""

    def __init__(self, cwd: Path | None, connect_timeout: float, environ: Mapping[str, str] | None,
                 shared: bool = False) -> None:
        self.cwd = cwd
        self.environ = environ
        self.connect_timeout = connect_timeout
        self.shared = shared  # the warm server's sessions (SharedSessions): kept across runs, closed by the server
        self.lock = threading.Lock()  # guards starting and closing
        self.runner: _LoopThread | None = None
        self.connections: dict[str, _Connection] = {}
        self.starts: dict[str, int] = {}
        self.closed = False
        self.users = 0  # the pools (runs) using this state now (SharedSessions closes a replaced one at 0)
        self.replaced = False

    def ensure_loop(self) -> _LoopThread:
        with self.lock:
            if self.closed:
                raise MCPError("the MCP session pool is closed")
            if self.runner is None:
                self.runner = _loop_thread()
                if not self.shared:
                    atexit.register(self.close)
            return self.runner

    def submit(self, coro: Coroutine[Any, Any, T], config: ServerConfig | None = None,
               run_left: float | None = None) -> T:
        """Run ``coro`` on the loop thread and return its result; while ``config``'s server is starting, a
        progress line on the caller's stderr every :data:`PROGRESS_EVERY` seconds."""
        runner = self.ensure_loop()
        progress = None
        if config is not None and not self.is_open(config, None):
            wait = min(self.connect_timeout, run_left) if run_left is not None else self.connect_timeout

            def progress(seconds: float) -> str | None:
                conn = self.connections.get(config.name)
                if conn is None or conn.ready is None or conn.ready.done():
                    return None
                return f"codeact: waiting for MCP server {config.name!r} to start ({seconds:.0f} s, up to {wait:g} s)"
        return runner.submit(coro, progress)

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            runner = self.runner
        if runner is None:
            return
        if not self.shared:
            atexit.unregister(self.close)
        if runner.here():  # a finalizer run by the loop's own thread: it cannot wait for itself
            runner.loop.create_task(self._close_all())
            return
        try:
            runner.submit(self._close_all())
        except Exception:  # noqa: BLE001 - closing is best effort (this may run from a finalizer or at exit)
            pass

    async def _close_all(self) -> None:
        for conn in self.connections.values():
            conn.stop.set()
        tasks = [c.task for c in self.connections.values() if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT)
        for conn in self.connections.values():
            if conn.errlog is not None:
                conn.errlog.close()

    async def session(self, config: ServerConfig, failed_here: set[str] | None = None,
                      used_here: set[str] | None = None, run_left: float | None = None) -> Any:
        """The server's session, opened on first use; raises :class:`ServerUnavailable` if it cannot be.

        ``failed_here``: the servers that failed during the calling run. A shared session (the warm server's) that
        died in an earlier run is opened again; one that died in this run stays failed for the rest of it.
        Start-up is awaited up to the pool's ``connect_timeout`` (the CLI's 60 s), and never past ``run_left``, the
        time left in the calling run: start-up counts in the run's deadline (:class:`RunOutOfTime` then)."""
        conn = self.connections.get(config.name)
        if conn is not None and self.shared and used_here is not None and config.name not in used_here:
            used_here.add(config.name)  # a run's first call: a local server that exited since is started again
            if conn.pid is not None and not process_running(conn.pid):
                await self._drop(conn)
                conn = None
        if conn is not None and self.shared and (
                (conn.dead is not None and config.name not in (failed_here or ()))
                or conn.config.config_hash() != config.config_hash()):
            await self._drop(conn)
            conn = None
        if conn is None:
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") \
                if config.transport == "stdio" else None
            conn = _Connection(config, errlog, ready=asyncio.get_running_loop().create_future())
            conn.ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "not retrieved"
            self.connections[config.name] = conn
            self.starts[config.name] = self.starts.get(config.name, 0) + 1
            conn.task = asyncio.create_task(self.serve(conn), name=f"mcp:{config.name}")
        if conn.dead is not None:
            raise conn.dead
        if conn.ready.done():  # the common case: no timer, no extra task
            return conn.ready.result()
        limit = self.connect_timeout
        by_run = run_left is not None and run_left < limit
        wait = min(limit, run_left) if run_left is not None else limit
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            return await asyncio.wait_for(asyncio.shield(conn.ready), wait)
        except asyncio.TimeoutError:
            pass
        if by_run:
            error: MCPError = RunOutOfTime(
                f"MCP server {config.name!r} was still starting when the run's time ran out (after "
                f"{loop.time() - began:.1f} s; start-up counts in the run's --timeout): raise --timeout, or "
                "call it again in a later run")
            if self.shared:  # the warm server: it goes on starting for the next run
                raise error from None
        else:
            error = ServerUnavailable(f"MCP server {config.name!r} did not start within {limit:g} s (start-up "
                                      "has its own bound, as in the Copilot CLI: 60 s, whatever its "
                                      "\"timeout\", which bounds each call)")
        conn.dead = error  # type: ignore[assignment]
        if conn.task is not None:
            conn.task.cancel()
        raise error from None

    def is_open(self, config: ServerConfig, used_here: set[str] | None) -> bool:
        """Whether a call to ``config``'s server goes to a session already open (no process starts). Read from the
        calling thread: a stale answer costs only a progress line not printed."""
        conn = self.connections.get(config.name)
        if conn is None or conn.dead is not None or conn.ready is None or not conn.ready.done():
            return False
        if conn.ready.cancelled() or conn.ready.exception() is not None:
            return False
        # the warm server checks a run's first call (a server that exited since starts again) and the configuration
        return not self.shared or (used_here is not None and config.name in used_here
                                   and conn.config.config_hash() == config.config_hash())

    async def serve(self, conn: _Connection) -> None:
        """Owns one connection for its whole life (anyio scopes must open and close in the same task)."""
        name = conn.config.name
        before = children() if self.shared else set()
        try:
            async with open_session(conn.config, errlog=conn.errlog, cwd=self.cwd, environ=self.environ) as session:
                if self.shared:
                    claimed = {c.pid for c in self.connections.values() if c is not conn}
                    conn.pid = min((p for p in children() - before if p not in claimed), default=None)
                if not conn.ready.done():
                    conn.ready.set_result(session)
                await conn.stop.wait()
        except BaseException as exc:  # noqa: BLE001 - recorded for every later call to this server
            tail = stderr_tail(conn.errlog)
            reason = describe_failure(exc) if not isinstance(exc, asyncio.CancelledError) else "cancelled"
            error = ServerUnavailable(f"MCP server {name!r} failed: {reason}" + (f" (stderr: {tail})" if tail else ""))
            conn.dead = conn.dead or error
            if not conn.ready.done():
                conn.ready.set_exception(conn.dead)
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _drop(self, conn: _Connection) -> None:
        """Stop one connection and forget it (a shared session that died, or whose configuration changed)."""
        conn.stop.set()
        if conn.task is not None:
            await asyncio.wait([conn.task], timeout=_CLOSE_TIMEOUT)
        if conn.errlog is not None:
            conn.errlog.close()
        if self.connections.get(conn.config.name) is conn:
            del self.connections[conn.config.name]

    async def close_idle(self, idle_s: float) -> None:
        """Stop the sessions no run has used for ``idle_s`` seconds."""
        now = time.monotonic()
        for conn in list(self.connections.values()):
            if conn.last_used and now - conn.last_used >= idle_s:
                await self._drop(conn)

    async def call(self, config: ServerConfig, tool: str, arguments: dict[str, Any], limit: float | None,
                   output_schema: Any = None, known: bool = False, failed_here: set[str] | None = None,
                   used_here: set[str] | None = None, run_left: float | None = None) -> Any:
        try:
            session = await self.session(config, failed_here, used_here, run_left)
        except ServerUnavailable:
            if failed_here is not None:
                failed_here.add(config.name)
            raise
        conn = self.connections[config.name]
        conn.last_used = time.monotonic()
        if conn.dead is not None:
            raise conn.dead
        schemas = getattr(session, "_tool_output_schemas", None)  # mcp 2.3: the SDK's cache of output schemas
        if known and isinstance(schemas, dict) and tool not in schemas:
            # From the lock: the SDK would list every tool first to learn it, one more round trip, which fails
            # outright when another tool of the server has an invalid schema (one the lock left out).
            schemas[tool] = dict(output_schema) if output_schema else None
        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=limit)
        except Exception as exc:
            if is_connection_closed(exc):
                await asyncio.sleep(0.05)  # let the transport notice the exit and the stderr flush
                tail = stderr_tail(conn.errlog)
                conn.dead = ServerUnavailable(
                    f"MCP server {config.name!r} stopped during {config.name}.{tool}() (connection closed); "
                    "later calls to it in this run fail too" + (f". Its last stderr line: {tail}" if tail else ""))
                if failed_here is not None:
                    failed_here.add(config.name)
                raise conn.dead from None
            if is_request_timeout(exc):
                raise TimeoutError(f"{config.name}.{tool}() did not answer within {limit:g} s") from None
            raise MCPError(f"{config.name}.{tool}() failed: {not_supported(describe_failure(exc))}") from None

    async def read_resource(self, config: ServerConfig, uri: str, limit: float | None,
                            failed_here: set[str] | None = None, used_here: set[str] | None = None,
                            run_left: float | None = None) -> list[dict[str, Any]]:
        """``resources/read`` on ``config``'s server: every content of ``uri`` as ``{"uri", "mime_type",
        "text" | "blob"}``."""
        session = await self.session(config, failed_here, used_here, run_left)
        try:
            result = await session.read_resource(uri) if limit is None else \
                await asyncio.wait_for(session.read_resource(uri), limit)
        except asyncio.TimeoutError:
            raise TimeoutError(f"mcp_resource({config.name!r}, {uri!r}) did not answer within {limit:g} s") from None
        except Exception as exc:
            raise MCPError(f"mcp_resource(server={config.name!r}, uri={uri!r}) failed: "
                           f"{describe_failure(exc)}") from None
        return [resource_contents(c) for c in result.contents]


class SessionPool:
    """One MCP session per server for the life of the pool (one run), opened lazily, closed by :meth:`close`.

    ``resolve(name)`` returns the :class:`ServerConfig` of a server when it is first needed (so configuration is
    read only if a program calls an MCP tool). The pool also closes when it is garbage-collected and at exit.
    """

    def __init__(self, resolve: Callable[[str], ServerConfig], *, cwd: Path | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 call_timeout: float | Callable[[], float] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._resolve = resolve
        self._call_timeout = call_timeout
        self._failed: set[str] = set()  # servers that failed during this pool's run
        self._used: set[str] = set()  # servers this pool's run has called
        self._opening = (cwd, connect_timeout, environ)
        self._taken: _PoolState | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def _state(self) -> _PoolState:
        """The sessions this pool uses, taken at its first MCP call or read: a run that calls no MCP tool never
        replaces the warm server's sessions kept for another environment."""
        if self._taken is None:
            cwd, connect_timeout, environ = self._opening
            shared = _SHARED
            if shared is not None:  # the warm server: sessions outlive the run, shared by runs with this environment
                state = shared.state(cwd, connect_timeout, environ)
                self._finalizer = weakref.finalize(self, shared.release, state)
            else:
                state = _PoolState(cwd, connect_timeout, environ)
                self._finalizer = weakref.finalize(self, state.close)
            self._taken = state
        return self._taken

    @property
    def starts(self) -> dict[str, int]:
        """How many sessions were opened per server (one per server per run is the contract)."""
        return dict(self._taken.starts) if self._taken is not None else {}

    def call(self, server: str, tool: str, arguments: dict[str, Any] | None = None, *,
             unwrap: bool = False, timeout: float | None = None, output_schema: Any = _UNKNOWN) -> Any:
        """Call ``tool`` on ``server`` and return its result as the program sees it (see :func:`result_value`).

        ``output_schema``: the tool's output schema as the lock records it (``None``: it has none), so the SDK need
        not list the server's tools to learn it."""
        self._state.ensure_loop()
        config = self._resolve(server)
        self._say_warnings(config)
        # the server's own timeout, but never longer than the run's (the pool's call_timeout: the time left in it)
        run_left = self._run_limit()
        limit = timeout or min((t for t in (config.call_timeout, run_left) if t), default=None)
        known = output_schema is not _UNKNOWN
        call = self._state.call(config, tool, arguments or {}, limit, output_schema if known else None, known,
                                self._failed, self._used, run_left)  # enforces timeouts
        result = self._state.submit(call, config, run_left)
        return result_value(result, unwrap=unwrap, label=f"{server}.{tool}()")

    def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """Read resource ``uri`` of ``server`` (what a ``resource_link`` item points at) as plain data."""
        self._state.ensure_loop()
        config = self._resolve(server)
        self._say_warnings(config)
        run_left = self._run_limit()
        limit = min((t for t in (config.call_timeout, run_left) if t), default=None)
        read = self._state.read_resource(config, uri, limit, self._failed, self._used, run_left)
        return self._state.submit(read, config, run_left)

    def _say_warnings(self, config: ServerConfig) -> None:
        """In the run that starts ``config``'s server, a note for each variable of its entry that is not set."""
        if not config.warnings:
            return
        conn = self._state.connections.get(config.name)
        if conn is not None and conn.dead is None and conn.config.config_hash() == config.config_hash():
            return  # started by an earlier run (the warm server's shared sessions)
        from ..core import notices

        for text in config.warnings:
            notices.note(config.name, text)

    def _run_limit(self) -> float | None:
        """The run's limit on one call: ``call_timeout``, or what it returns when it is a function (the time left in
        the run: codeact.mcp.bindings passes its deadline's)."""
        limit = self._call_timeout
        return max(0.001, limit()) if callable(limit) else limit

    def close(self) -> None:
        """Close every session and stop every local server this pool started."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def session_key(environ: Mapping[str, str]) -> str:
    """What a local server's session is kept for: the digest of ``environ`` without :data:`SHELL_VARIABLES`."""
    import hashlib

    kept = sorted((k, v) for k, v in environ.items() if k not in SHELL_VARIABLES)
    return hashlib.sha256(repr(kept).encode("utf-8", "surrogatepass")).hexdigest()


class SharedSessions:
    """The warm server's MCP sessions: kept across runs, one set per working folder and environment (a local server
    inherits the environment of the run that started it, so a run whose environment differs gets its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[str, str], _PoolState] = {}
        self._closing: list[_PoolState] = []  # replaced states no run uses, closed outside the lock

    def state(self, cwd: Path | None, connect_timeout: float, environ: Mapping[str, str] | None) -> _PoolState:
        """The sessions for runs in ``cwd`` under ``environ`` (taken by a pool until :meth:`release`); a state of
        ``cwd`` made for another environment is replaced, and closed once no run uses it."""
        env = dict(os.environ if environ is None else environ)
        key = (str(cwd), session_key(env))
        with self._lock:
            state = self._states.get(key)
            if state is None or state.closed:
                state = self._states[key] = _PoolState(cwd, connect_timeout, env, shared=True)
                for other_key, other in list(self._states.items()):
                    if other_key[0] == key[0] and other is not state:
                        other.replaced = True
                        del self._states[other_key]
                        if other.users == 0:
                            self._closing.append(other)
            state.users += 1
            closing, self._closing = self._closing, []
        for old in closing:
            old.close()
        return state

    def release(self, state: _PoolState) -> None:
        """A run is done with ``state``: a replaced state no run uses any more is closed (its servers stop)."""
        with self._lock:
            state.users -= 1
            done = state.replaced and state.users == 0
        if done:
            state.close()

    def sessions(self) -> list[dict[str, Any]]:
        """``[{"server", "pid"}]`` of every open session."""
        with self._lock:
            states = list(self._states.values())
        return [{"server": c.config.name, "pid": c.pid} for s in states for c in list(s.connections.values())
                if c.dead is None and c.ready is not None and c.ready.done() and not c.ready.exception()]

    def close_idle(self, idle_s: float) -> None:
        """Stop the sessions no run has used for ``idle_s`` seconds."""
        with self._lock:
            states = [s for s in self._states.values() if s.runner is not None and not s.closed]
        for state in states:
            try:
                state.submit(state.close_idle(idle_s))
            except Exception:  # noqa: BLE001 - best effort
                pass

    def close(self) -> None:
        with self._lock:
            states, self._states = list(self._states.values()), {}
        for state in states:
            state.close()


_SHARED: SharedSessions | None = None


def share_sessions() -> SharedSessions:
    """From now on every :class:`SessionPool` of this process keeps its sessions across runs (the warm server)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = SharedSessions()
    return _SHARED


def shared_sessions() -> list[dict[str, Any]]:
    """The open shared sessions (``[]`` outside the warm server)."""
    return _SHARED.sessions() if _SHARED is not None else []


def close_shared_sessions() -> None:
    """Stop every shared session and the local servers they started."""
    global _SHARED
    shared, _SHARED = _SHARED, None
    if shared is not None:
        shared.close()


__all__ = ["PROGRESS_EVERY", "SHELL_VARIABLES", "SessionPool", "SharedSessions", "close_shared_sessions", "session_key",
           "share_sessions", "shared_sessions"]
