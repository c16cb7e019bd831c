"""MCP client sessions with the official ``mcp`` SDK: stdio, streamable HTTP and SSE.

:class:`SessionPool` gives a run ONE session per server, opened on first use and closed when the pool closes.
The runner and the sandbox loop are synchronous, so the pool owns one asyncio event loop that holds every session,
and each call runs that loop in the calling thread until the call completes (``run_until_complete``); between
calls the loop rests. An earlier version kept the loop running in a background thread and submitted calls with
``run_coroutine_threadsafe``: that costs two thread wake-ups per call, which measured +0.45 to +1.3 ms on a
~2 ms call on a busy 2-core machine (1.37x to 1.58x a direct SDK call; see benchmarks/bench_mcp.py). A caller
whose thread already runs an event loop gets the background-thread path for its calls (``in_helper_thread``).

On the warm server (:func:`share_sessions`) the sessions outlive the run: one pool state per working folder and
environment (a local server inherits the environment of the run that started it), shared by the runs that match,
reopened by the next run when one died, stopped when idle or with the server. Parallel runs call through the same
loop: whichever thread finds it resting drives it; a call from another thread meanwhile joins the running loop.

The SDK costs about a second to import: this module imports it only inside the functions that open a
connection, so importing ``codeact.mcp.session_pool`` is free and a run that calls no MCP tool never loads it.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import asyncio
import atexit
import base64
import concurrent.futures
import contextlib
import os
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ..backends.cpu import all_cpus
from ..errors import ToolError, ToolTimeout
from .config import START_TIMEOUT, ServerConfig

if TYPE_CHECKING:
    from mcp import ClientSession

T = TypeVar("T")

# Start-up (process start and handshake) has its own bound, as in the Copilot CLI 1.0.102: a server's "timeout"
# bounds each call, not its start (a server answering initialize after 6 s with "timeout": 2000 is loaded there).
DEFAULT_CONNECT_TIMEOUT = START_TIMEOUT
PROGRESS_EVERY = 5.0  # seconds between "still waiting for the server" lines on stderr
NOT_SUPPORTED = {"Sampling not supported": "sampling (it asked the client's model to write text)",
                 "Elicitation not supported": "elicitation (it asked the user a question)"}
_CLOSE_TIMEOUT = 10.0  # seconds the pool waits for every session to shut down


_UNKNOWN: Any = object()  # SessionPool.call: no output schema given (the SDK lists the tools to learn it)


class MCPError(ToolError):
    """An MCP server or tool failed; the program sees it as a ``RuntimeError`` it can catch."""


class ServerUnavailable(MCPError):
    """A server could not be started, did not answer, or stopped during the run."""


class ToolCallError(MCPError):
    """A tool ran and reported an error (``isError``)."""


class RunOutOfTime(MCPError, ToolTimeout):
    """The run's time ran out while a server was still starting (start-up counts in the run's deadline); the
    program sees a ``TimeoutError`` with this message."""


@contextlib.asynccontextmanager
async def open_session(config: ServerConfig, *, errlog: TextIO | None = None, cwd: Path | None = None,
                       environ: Mapping[str, str] | None = None, session_options: Mapping[str, Any] | None = None
                       ) -> AsyncIterator[ClientSession]:
    """An initialised ``ClientSession`` to ``config``'s server; closes it (and stops a local server) on exit.

    A local server inherits ``environ`` (the calling run's environment; ``os.environ`` when ``None``) plus its own
    ``env``, as under the Copilot CLI: tokens, proxies and the like reach it. ``session_options``: more
    ``ClientSession`` arguments (discovery's sampling/elicitation callbacks, to list tools as the CLI sees them).
    """
    from mcp import ClientSession

    async with contextlib.AsyncExitStack() as stack:
        if config.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            inherited = dict(os.environ if environ is None else environ)
            params = StdioServerParameters(command=config.command or "", args=list(config.args),
                                           env={**inherited, **config.env}, cwd=config.cwd or cwd)
            streams = await stack.enter_async_context(stdio_client(params, errlog=errlog or _devnull()))
        elif config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=dict(config.headers) or None))
            streams = await stack.enter_async_context(streamable_http_client(config.url or "", http_client=http))
        else:
            from mcp.client.sse import sse_client

            streams = await stack.enter_async_context(sse_client(config.url or "", headers=dict(config.headers)))
        read, write = streams[0], streams[1]
        session = await stack.enter_async_context(ClientSession(read, write, **(session_options or {})))
        await session.initialize()
        yield session


def _devnull() -> TextIO:
    return open("/dev/null", "w")  # noqa: SIM115 - lives as long as the server process


def stderr_tail(errlog: TextIO | None, limit: int = 300) -> str:
    """The last non-empty line a local server wrote to stderr, for error messages ('' if none)."""
    if errlog is None or errlog.closed:
        return ""
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [ln.strip() for ln in errlog.read().splitlines() if ln.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][-limit:] if lines else ""


def describe_failure(exc: BaseException) -> str:
    """A one-line reason for a failed connection or call, without the SDK's exception-group noise."""
    leaves = list(_leaves(exc))
    # Prefer the most telling leaf: a process that could not start, a closed connection, then anything else.
    leaf = next((e for e in leaves if isinstance(e, OSError)), None) or leaves[0]
    text = str(leaf).strip() or type(leaf).__name__
    if isinstance(leaf, FileNotFoundError) and leaf.filename:
        text = f"command not found: {leaf.filename}"
    errors = getattr(leaf, "errors", None)
    if callable(errors) and type(leaf).__name__ == "ValidationError":  # pydantic: say what was invalid
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{text.splitlines()[0]}: {where}: {first.get('msg', '')}"
        except Exception:  # noqa: BLE001 - fall back to the first line
            pass
    return text.splitlines()[0]


if sys.version_info < (3, 11):  # anyio brings the backport there
    from exceptiongroup import BaseExceptionGroup


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub)
    else:
        yield exc


def is_connection_closed(exc: BaseException) -> bool:
    return any(getattr(e, "code", None) == -32000 or "Connection closed" in str(e) for e in _leaves(exc))


def is_request_timeout(exc: BaseException) -> bool:
    return any(getattr(e, "code", None) == -32001 for e in _leaves(exc))


def result_value(result: Any, *, unwrap: bool = False, label: str = "tool") -> Any:
    """A ``CallToolResult`` as the program sees it, as plain data.

    Structured content, if present, as data (``unwrap`` returns ``structured["result"]`` for the SDK's wrapped
    primitive results, ``{"result": 3}``). Else, when every item is text (or an embedded text resource), the text.
    Else a list with one dict per item: ``{"type": "text", "text"}``, ``{"type": "image"|"audio", "mime_type",
    "data"}`` (base64), ``{"type": "resource", "uri", "mime_type", "text"|"blob"}`` (blob: base64) and
    ``{"type": "resource_link", "uri", "name", "mime_type", "description"}`` (read it with ``mcp_resource``).
    A result flagged ``isError`` raises :class:`ToolCallError` with the server's text.
    """
    if result.is_error:
        raise ToolCallError(f"{label} failed: {not_supported(_text(result.content)) or 'the server reported an error'}")
    data = result.structured_content
    if data is not None:
        if unwrap and isinstance(data, dict) and set(data) == {"result"}:
            return data["result"]
        return data
    items = [content_item(item) for item in result.content or []]
    if all(i["type"] == "text" or (i["type"] == "resource" and "text" in i) for i in items):
        return "\n".join(i["text"] for i in items)
    return items


def content_item(item: Any) -> dict[str, Any]:
    """One MCP content block (or resource contents) as a plain dict (binary data stays base64 text)."""
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": item.text}
    if kind in ("image", "audio"):
        return {"type": kind, "mime_type": getattr(item, "mime_type", None), "data": getattr(item, "data", "")}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": str(item.uri), "name": getattr(item, "name", None),
                "mime_type": getattr(item, "mime_type", None), "description": getattr(item, "description", None)}
    if kind == "resource":
        return {"type": "resource", **resource_contents(item.resource)}
    return {"type": str(kind or "unknown"), "value": item.model_dump(mode="json") if hasattr(item, "model_dump")
            else str(item)}


def resource_contents(contents: Any) -> dict[str, Any]:
    """``TextResourceContents`` / ``BlobResourceContents`` as ``{"uri", "mime_type", "text" | "blob"}``."""
    out: dict[str, Any] = {"uri": str(contents.uri), "mime_type": getattr(contents, "mime_type", None)}
    if hasattr(contents, "text"):
        out["text"] = contents.text
    else:
        blob = getattr(contents, "blob", "")
        out["blob"] = blob if isinstance(blob, str) else base64.b64encode(blob).decode("ascii")
    return out


def not_supported(text: str) -> str:
    """A server's error text, with the SDK's "Sampling/Elicitation not supported" made plain for the model."""
    for marker, what in NOT_SUPPORTED.items():
        if marker in text:
            return f"the server needs {what}, which is not supported by CodeAct; its other tools still work " \
                   f"({text.strip()})"
    return text


def _text(content: list[Any]) -> str:
    parts = []
    for item in content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource" and hasattr(getattr(item, "resource", None), "text"):
            parts.append(item.resource.text)
    return "\n".join(parts)


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
        self.lock = threading.Lock()  # guards creating and closing the loop
        self.drive = threading.RLock()  # one thread runs the loop at a time
        self.loop: asyncio.AbstractEventLoop | None = None
        self.connections: dict[str, _Connection] = {}
        self.starts: dict[str, int] = {}
        self.closed = False

    def ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.closed:
                raise MCPError("the MCP session pool is closed")
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
                if not self.shared:
                    atexit.register(self.close)
            return self.loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the pool's loop until it completes, and return its result.

        The loop runs in the CALLING thread while a call is in flight and rests in between (the sessions' reader
        tasks simply resume with the next call). A call therefore costs what a direct SDK call costs: no
        wake-up of another thread in either direction. A caller whose thread already runs an event loop (async
        code calling the synchronous runner) cannot run a second one there, so its call is driven from a helper
        thread instead. While one thread drives the loop, a call from another thread (parallel runs on the warm
        server) is handed to the running loop and goes on at once; its thread waits, and drives the loop itself
        once it is free.
        """
        if loop_running_here():
            return in_helper_thread(lambda: self._drive(coro))
        return self._drive(coro)

    def _drive(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        assert loop is not None
        if self.drive.acquire(blocking=False):  # the common case: nobody else drives the loop
            try:
                return loop.run_until_complete(coro)
            finally:
                self.drive.release()
        future = asyncio.run_coroutine_threadsafe(coro, loop)  # runs now, in the loop another thread drives
        while True:
            try:
                return future.result(timeout=0.005)
            except concurrent.futures.TimeoutError:
                pass
            if self.drive.acquire(blocking=False):  # that thread's call ended: drive the loop until ours does
                try:
                    if not future.done():
                        loop.run_until_complete(asyncio.wrap_future(future, loop=loop))
                finally:
                    self.drive.release()

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            loop = self.loop
        if loop is None:
            return
        if not self.shared:
            atexit.unregister(self.close)

        def shut() -> None:
            with self.drive:
                try:
                    loop.run_until_complete(self._close_all())
                    loop.run_until_complete(loop.shutdown_asyncgens())
                finally:
                    loop.close()

        try:
            in_helper_thread(shut) if loop_running_here() else shut()
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
        state = self
        conn = state.connections.get(config.name)
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
            state.connections[config.name] = conn
            state.starts[config.name] = state.starts.get(config.name, 0) + 1
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
        deadline = began + wait
        while True:
            left = deadline - loop.time()
            try:
                return await asyncio.wait_for(asyncio.shield(conn.ready), max(0.0, min(left, PROGRESS_EVERY)))
            except asyncio.TimeoutError:
                if loop.time() < deadline - 0.01:
                    print(f"codeact: waiting for MCP server {config.name!r} to start "
                          f"({loop.time() - began:.0f} s, up to {wait:g} s)", file=sys.stderr, flush=True)
                    continue
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
        """Whether a call to ``config``'s server goes to a session already open, which :meth:`session` returns as
        it is (no process starts). Read from the calling thread, outside the loop: a stale answer costs only CPU
        placement (:func:`codeact.backends.cpu.all_cpus`)."""
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
        before = _children() if self.shared else set()
        try:
            async with open_session(conn.config, errlog=conn.errlog, cwd=self.cwd, environ=self.environ) as session:
                if self.shared:
                    claimed = {c.pid for c in self.connections.values() if c is not conn}
                    conn.pid = min((p for p in _children() - before if p not in claimed), default=None)
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


def loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def in_helper_thread(func: Callable[[], T]) -> T:
    """``func()`` run in a short-lived thread (for callers whose own thread already runs an event loop)."""
    value: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            value.append(func())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=target, name="codeact-mcp")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return value[0]


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
        if _SHARED is not None:  # the warm server: sessions outlive the run, shared by runs with this environment
            self._state = _SHARED.state(cwd, connect_timeout, environ)
            self._finalizer = weakref.finalize(self, lambda: None)
        else:
            self._state = _PoolState(cwd, connect_timeout, environ)
            self._finalizer = weakref.finalize(self, self._state.close)

    @property
    def starts(self) -> dict[str, int]:
        """How many sessions were opened per server (one per server per run is the contract)."""
        return dict(self._state.starts)

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
        if self._state.is_open(config, self._used):  # the common case: nothing starts, the run keeps its CPU
            result = self._state.submit(call)
        else:  # the server this call may start gets every CPU, not the run's one (unless another run's thread
            with all_cpus():  # drives the shared loop at that moment: the server then gets that thread's CPUs)
                result = self._state.submit(call)
        return result_value(result, unwrap=unwrap, label=f"{server}.{tool}()")

    def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """Read resource ``uri`` of ``server`` (what a ``resource_link`` item points at) as plain data."""
        self._state.ensure_loop()
        config = self._resolve(server)
        self._say_warnings(config)
        run_left = self._run_limit()
        limit = min((t for t in (config.call_timeout, run_left) if t), default=None)
        read = self._state.read_resource(config, uri, limit, self._failed, self._used, run_left)
        if self._state.is_open(config, self._used):
            return self._state.submit(read)
        with all_cpus():  # as in call
            return self._state.submit(read)

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
        self._finalizer()

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def process_running(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited child not yet reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _children() -> set[int]:
    """This process's child processes (Linux ``/proc``; empty elsewhere)."""
    me, found = str(os.getpid()).encode(), set[int]()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.add(int(entry))
    return found


class SharedSessions:
    """The warm server's MCP sessions: kept across runs, one set per working folder and environment (a local server
    inherits the environment of the run that started it, so a run whose environment differs gets its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[str, str], _PoolState] = {}

    def state(self, cwd: Path | None, connect_timeout: float, environ: Mapping[str, str] | None) -> _PoolState:
        import hashlib

        env = dict(os.environ if environ is None else environ)
        key = (str(cwd), hashlib.sha256(repr(sorted(env.items())).encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            state = self._states.get(key)
            if state is None or state.closed:
                state = self._states[key] = _PoolState(cwd, connect_timeout, env, shared=True)
            return state

    def sessions(self) -> list[dict[str, Any]]:
        """``[{"server", "pid"}]`` of every open session."""
        with self._lock:
            states = list(self._states.values())
        return [{"server": c.config.name, "pid": c.pid} for s in states for c in list(s.connections.values())
                if c.dead is None and c.ready is not None and c.ready.done() and not c.ready.exception()]

    def close_idle(self, idle_s: float) -> None:
        """Stop the sessions no run has used for ``idle_s`` seconds."""
        with self._lock:
            states = [s for s in self._states.values() if s.loop is not None and not s.closed]
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


__all__ = ["MCPError", "RunOutOfTime", "ServerUnavailable", "SessionPool", "ToolCallError", "content_item", "open_session",
           "process_running", "result_value", "SharedSessions", "close_shared_sessions", "share_sessions", "shared_sessions"]
