"""Opening one MCP client session with the official ``mcp`` SDK (stdio, streamable HTTP, SSE), the errors the MCP
code raises, and reading the SDK's failures: what the pool (:mod:`codeact.mcp.session_pool`) and discovery share.

The SDK is slow to import: it is imported only inside :func:`open_session`, so importing this module is
free and a run that calls no MCP tool never loads it.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ..errors import ToolError, ToolTimeout
from .config import START_TIMEOUT, ServerConfig

if TYPE_CHECKING:
    from mcp import ClientSession

T = TypeVar("T")

# Start-up (process start and handshake) has its own bound, as in the Copilot CLI 1.0.102: a server's "timeout"
# bounds each call, not its start (a server answering initialize after 6 s with "timeout": 2000 is loaded there).
DEFAULT_CONNECT_TIMEOUT = START_TIMEOUT


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

            from .prespawn import stdio_params

            command, args, env, folder = stdio_params(config, cwd, environ)
            params = StdioServerParameters(command=command, args=args, env=env, cwd=folder)
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


__all__ = ["DEFAULT_CONNECT_TIMEOUT", "MCPError", "RunOutOfTime", "ServerUnavailable", "ToolCallError",
           "describe_failure", "in_helper_thread", "is_connection_closed", "is_request_timeout", "loop_running_here",
           "open_session", "stderr_tail"]
