"""The provider hub: a loopback WebSocket endpoint where running processes lend tools to CodeAct programs.

It runs in its own threads (``websockets``' threaded server: one thread per connection) inside a synchronous
process. A provider's tools become :class:`~codeact.core.tool.Tool` objects named ``provider.tool``; their
``call`` sends a ``tool.call`` and blocks the calling run thread until the ``tool.result``, the provider leaving,
or the run's deadline. Calls go one way: a provider can answer calls, never make them.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import builtins
import hmac
import http
import itertools
import json
import keyword
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from ..core.limits import Deadline
from ..core.tool import Source, Tool
from ..errors import ToolError
from . import protocol as wire
from .state import open_state

if TYPE_CHECKING:
    from websockets.http11 import Request, Response
    from websockets.sync.server import Server, ServerConnection

PATH = "/providers"
AUTH_TIMEOUT = 3.0  # seconds a connection has for its handshake and, without an Authorization header, its auth frame
REFUSED_CLOSE_TIMEOUT = 0.5  # seconds a refused peer has to answer our close frame before its socket is cut
PRE_AUTH_MAX_SIZE = 4096  # bytes of a frame before the peer has authenticated (an auth frame is a few dozen)
MAX_PENDING = 16  # connections not yet authenticated at once (each holds a thread); more are closed at once
DEFAULT_CALL_TIMEOUT = 60.0  # a call made outside any run (no Deadline.current()) waits this long
LIVE: Source = "live"  # the tools a live provider offers (core.tool.Source)
_BUILTIN_NAMES = frozenset(dir(builtins))


class ProviderGone(ToolError):
    """A live tool whose provider is not connected (it left, or left during the call)."""


class ProviderToolError(ToolError):
    """A live tool's provider answered with an error, or with a result that cannot be used."""


@dataclass
class _Waiter:
    tool: str  # as programs call it, for the errors
    done: threading.Event = field(default_factory=threading.Event)
    value: Any = None
    error: BaseException | None = None

    def settle(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error
        self.done.set()


@dataclass
class _Provider:
    """One registered provider: its connection, its tools by Python name, and the calls waiting for it."""

    name: str  # the namespace programs use
    wire_name: str  # as it said in hello
    connection: ServerConnection
    context: str | None
    specs: dict[str, wire.ToolSpec] = field(default_factory=dict)  # Python tool name -> spec (wire name inside)
    pending: dict[str, _Waiter] = field(default_factory=dict)


class ProviderHub:
    """The WebSocket endpoint live providers connect to (see ``docs/providers.md`` for the wire format).

    ``token`` is what providers must present; ``reserved()`` names they may not take (built-ins, MCP
    namespaces); ``allowed_origins`` the browser origins let in (a connection with any other ``Origin`` header is
    refused; one without is a local process); ``max_result`` the tool-result cap in bytes; ``on_change`` is called
    (from a hub thread) whenever the set of live tools changes. With ``state_dir`` (and ``state_name``, a file
    name stem) :meth:`start` reuses the port of the last status file there when free and writes the new one
    (:mod:`codeact.providers.state`); ``token`` should then be that folder's (``open_state(...).token``).
    """

    def __init__(self, *, token: str, reserved: Callable[[], Iterable[str]], allowed_origins: Sequence[str] = (),
                 max_result: int = 1 << 20, on_change: Callable[[], None] | None = None,
                 token_file: Path | str | None = None, state_dir: Path | str | None = None, state_name: str = "",
                 call_timeout: float = DEFAULT_CALL_TIMEOUT) -> None:
        if not token:
            raise ValueError("the provider hub needs a token")
        self._token = token
        self._reserved = reserved
        self._origins = frozenset(allowed_origins)
        self._max_result = max_result
        self._on_change = on_change
        self._state = None if state_dir is None else open_state(state_dir, state_name)
        if token_file is None and self._state is not None and self._state.token == token:
            token_file = self._state.token_file
        self._token_file = None if token_file is None else str(token_file)
        self._call_timeout = call_timeout
        self._lock = threading.Lock()
        self._providers: dict[str, _Provider] = {}
        self._connections: set[ServerConnection] = set()
        self._pending: set[int] = set()  # ids of the connections not yet authenticated
        self._ids = itertools.count(1)
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._url: str | None = None

    # -- life cycle -------------------------------------------------------------------------------------------

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (a busy ``port`` falls back to a free one) and return the URL providers use."""
        from websockets.sync.server import serve

        if not port and self._state is not None:
            port = self._state.port
        options: dict[str, Any] = {"process_request": self._check_request, "server_header": None,
                                   "max_size": PRE_AUTH_MAX_SIZE, "open_timeout": AUTH_TIMEOUT,
                                   # a refused handshake waits this long for the peer to hang up, holding its slot
                                   "close_timeout": AUTH_TIMEOUT,
                                   "create_connection": self._connection_class(),
                                   "compression": None}  # by us, with a reason, not by the library's close
        try:
            server = serve(self._handle, host, port, **options)
        except OSError:
            if not port:
                raise
            server = serve(self._handle, host, 0, **options)
        bound = server.socket.getsockname()[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="codeact-provider-hub", daemon=True)
        self._thread.start()
        self._url = f"ws://{host}:{bound}{PATH}"
        if self._state is not None:
            self._state.record(self._url)
        return self._url

    def stop(self) -> None:
        """Mark the status file stopped, then stop listening, close every connection and fail the calls still
        waiting (in this order: a provider re-reads the status file before it connects)."""
        if self._state is not None and self._url is not None and self._server is not None:
            self._state.retire(self._url)
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.close(1001, "the CodeAct server is stopping")
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    # -- what the server reads --------------------------------------------------------------------------------

    @property
    def connected(self) -> int:
        """How many providers are registered (said hello) now."""
        with self._lock:
            return len(self._providers)

    def tools(self) -> dict[str, Tool]:
        """Every live tool now, ``"provider.tool" -> Tool``; a Tool kept after its provider left fails when called."""
        with self._lock:
            providers = list(self._providers.values())
        out: dict[str, Tool] = {}
        for provider in providers:
            for py_name, spec in list(provider.specs.items()):
                tool = self._tool(provider, py_name, spec)
                out[tool.name] = tool
        return out

    def context(self, provider: str) -> str | None:
        """The ``context`` text ``provider`` sent with its hello (None if it sent none or is not connected)."""
        with self._lock:
            found = self._providers.get(provider)
        return found.context if found else None

    def status(self) -> dict[str, Any]:
        """``{"url", "token_file", "connected", "providers": [{"name", "tools"}]}`` for ``server status``."""
        with self._lock:
            providers = [{"name": p.name, "tools": sorted(p.specs)} for p in self._providers.values()]
        return {"url": self._url, "token_file": self._token_file, "connected": len(providers),
                "providers": sorted(providers, key=lambda p: str(p["name"]))}

    # -- calls from run threads -------------------------------------------------------------------------------

    def _tool(self, provider: _Provider, py_name: str, spec: wire.ToolSpec) -> Tool:
        from ..mcp.exposure import optional_takes_none, refusing_null, without_none

        name, wire_tool, hub = f"{provider.name}.{py_name}", spec.name, self
        omit = refusing_null(spec.parameters)  # None for an optional parameter means "not given", as for MCP tools

        def call(**kwargs: Any) -> Any:
            return hub.call(provider.name, wire_tool, without_none(kwargs, omit))

        lines = [spec.description or "(the provider gives no description)", "",
                 f"Live tool {wire_tool!r} of provider {provider.wire_name!r}, lent by a running process over the "
                 f"provider hub; call it as {name}(...) with keyword arguments. The call waits for the provider's "
                 "answer until the run's deadline; it fails (RuntimeError) when the provider reports an error or "
                 "is no longer connected."]
        if provider.context:
            from ..core.config import launcher_invocation

            lines += ["", f"{launcher_invocation('describe ' + provider.name)} shows what the provider says about "
                          "itself."]
        first = spec.description.strip().splitlines()
        return Tool(name=name, description=first[0] if first else "", parameters=optional_takes_none(spec.parameters, omit),
                    returns="Any", call=call, source=LIVE, doc="\n".join(lines),
                    original_name=None if py_name == wire_tool else f"{provider.name}.{wire_tool}")

    def call(self, provider: str, tool: str, args: dict[str, Any]) -> Any:
        """Call ``tool`` (its provider's name for it) of ``provider`` and wait for the answer, bounded by the run's
        deadline (else ``call_timeout``). Raises :class:`ProviderGone`, :class:`ProviderToolError` or the
        deadline's ``ToolTimeout``."""
        shown = f"{provider}.{identifier(tool)}"
        deadline = Deadline.current() or Deadline(self._call_timeout)
        with self._lock:
            found = self._providers.get(provider)
            if found is None:
                raise ProviderGone(f"{shown}(): live provider {provider!r} is not connected (it disconnected); "
                                   "its tools are gone until it connects again")
            if not any(spec.name == tool for spec in found.specs.values()):
                raise ProviderGone(f"{shown}(): live provider {provider!r} no longer offers {tool!r} (offers: "
                                   f"{', '.join(sorted(found.specs)) or 'nothing'})")
            call_id = f"c{next(self._ids)}"
            waiter = found.pending[call_id] = _Waiter(shown)
        try:
            frame = wire.tool_call(call_id, tool, args)
        except (TypeError, ValueError) as exc:
            self._forget(found, call_id)
            raise ProviderToolError(f"{shown}(): the arguments cannot be sent as JSON ({exc})") from None
        try:
            found.connection.send(frame)
        except Exception:  # noqa: BLE001 - closed under us: the provider is gone
            self._forget(found, call_id)
            raise ProviderGone(f"{shown}(): live provider {provider!r} disconnected before the call was sent") \
                from None
        if not waiter.done.wait(deadline.remaining()):
            self._forget(found, call_id)
            raise deadline.stopped(shown, f"waiting for live provider {provider!r}")
        if waiter.error is not None:
            raise waiter.error
        return waiter.value

    def _forget(self, provider: _Provider, call_id: str) -> None:
        with self._lock:
            provider.pending.pop(call_id, None)

    # -- connections (hub threads) ----------------------------------------------------------------------------

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """The handshake's checks: the path, no token in the URL, the Origin allow-list."""
        url = urlsplit(request.path)
        if "token" in parse_qs(url.query) or "token=" in url.query:
            return connection.respond(http.HTTPStatus.BAD_REQUEST, "Never put the token in the URL: send "
                                      "'Authorization: Bearer TOKEN' or a first frame {\"type\": \"auth\"}.\n")
        if url.path != PATH:
            return connection.respond(http.HTTPStatus.NOT_FOUND, f"The provider endpoint is {PATH}.\n")
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self._origins:
            return connection.respond(http.HTTPStatus.FORBIDDEN, f"Origin {origin} is not allowed to lend tools "
                                      "to CodeAct.\n")
        return None

    def _handle(self, connection: ServerConnection) -> None:
        with self._lock:
            self._connections.add(connection)
        provider: _Provider | None = None
        try:
            if not self._authenticate(connection):
                return
            for frame in connection:
                try:
                    message = wire.parse(frame)
                except wire.ProtocolError as exc:
                    connection.send(wire.error(exc.code, str(exc)))
                    continue
                if isinstance(message, wire.Goodbye):
                    break
                provider = self._dispatch(connection, provider, message)
        except Exception:  # noqa: BLE001 - a connection that breaks ends its provider, never the hub
            pass
        finally:
            with self._lock:
                self._connections.discard(connection)
            if provider is not None:
                self._drop(provider)
            connection.close()

    def _connection_class(self) -> type[ServerConnection]:
        """The hub's connections: at most :data:`MAX_PENDING` unauthenticated at once (one more is closed before
        its handshake is read); each leaves the count once it authenticates or closes."""
        from websockets.sync.server import ServerConnection

        hub = self

        class Connection(ServerConnection):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                with hub._lock:
                    if len(hub._pending) >= MAX_PENDING:
                        raise ConnectionRefusedError("too many unauthenticated connections")
                    hub._pending.add(id(self))
                super().__init__(*args, **kwargs)

            def close_socket(self) -> None:
                hub._authenticated(self)
                super().close_socket()

        return Connection

    def _authenticated(self, connection: ServerConnection) -> None:
        """``connection`` no longer counts as pending: it authenticated, or it is closing."""
        with self._lock:
            self._pending.discard(id(connection))

    def _authenticate(self, connection: ServerConnection) -> bool:
        try:
            if not self._check_token(connection):
                return False
        finally:
            self._authenticated(connection)
        # authenticated: frames up to an oversized result (refused by us, with a reason, not by the library)
        connection.protocol.max_message_size = self._max_result * 4 + (1 << 16)
        return True

    def _check_token(self, connection: ServerConnection) -> bool:
        header = connection.request.headers.get("Authorization") if connection.request else None
        if header is not None:
            scheme, _, token = header.partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self._token.encode()):
                return True
            return self._refuse(connection, wire.AUTH_FAILED, "the Authorization header does not carry the "
                                "token of this CodeAct server (read it from the token file again)")
        try:
            first = connection.recv(timeout=AUTH_TIMEOUT)
        except TimeoutError:
            return self._refuse(connection, wire.AUTH_REQUIRED, f"no token within {AUTH_TIMEOUT:g} s: send "
                                "'Authorization: Bearer TOKEN' or a first frame {\"type\": \"auth\", \"token\"}")
        try:
            message = wire.parse(first)
        except wire.ProtocolError:
            message = None
        if not isinstance(message, wire.Auth):
            return self._refuse(connection, wire.AUTH_REQUIRED, "authenticate first: send 'Authorization: Bearer "
                                "TOKEN' on the upgrade request or a first frame {\"type\": \"auth\", \"token\"}")
        if not hmac.compare_digest(message.token.encode(), self._token.encode()):
            return self._refuse(connection, wire.AUTH_FAILED, "wrong token (read it from the token file again)")
        return True

    def _refuse(self, connection: ServerConnection, code: str, message: str) -> bool:
        self._authenticated(connection)  # the slot is free now, not after the close handshake
        # a refused peer that never answers the close frame would hold its socket and thread close_timeout (10 s)
        connection.close_timeout = REFUSED_CLOSE_TIMEOUT
        connection.send(wire.error(code, message))
        connection.close(1008, code)
        return False

    def _dispatch(self, connection: ServerConnection, provider: _Provider | None,
                  message: wire.Message) -> _Provider | None:
        if isinstance(message, wire.Hello):
            if provider is not None:
                connection.send(wire.error(wire.BAD_MESSAGE, f"already registered as {provider.name!r}; send "
                                                             "tools.update to change tools"))
                return provider
            return self._register(connection, message)
        if isinstance(message, (wire.ToolsUpdate, wire.ToolResult)) and provider is None:
            connection.send(wire.error(wire.NOT_REGISTERED, "send a hello (accepted: hello.ack) first"))
        elif isinstance(message, wire.ToolsUpdate) and provider is not None:
            self._update(provider, message)
        elif isinstance(message, wire.ToolResult) and provider is not None:
            self._settle(provider, message)
        return provider  # auth after authenticating, server-side types, unknown types: ignored

    def _register(self, connection: ServerConnection, hello: wire.Hello) -> _Provider | None:
        name = hello.name
        if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name) or name.startswith("_"):
            connection.send(wire.error(wire.INVALID_NAME, f"provider name {name!r} must be a Python identifier "
                                       "(letters, digits, _; not a keyword, not starting with _): programs call "
                                       f"{name}.tool(...)"))
            return None
        try:
            specs = _by_python_name(hello.tools)
        except wire.ProtocolError as exc:
            connection.send(wire.error(exc.code, f"hello refused: {exc}"))
            return None
        provider = _Provider(name, hello.name, connection, hello.context, specs)
        taken = set(self._reserved())
        with self._lock:
            if name in taken or name in _BUILTIN_NAMES:
                why = "a CodeAct built-in, MCP server or Python built-in"
            elif name in self._providers:
                why = "another connected provider"
            else:
                why = ""
                self._providers[name] = provider
        if why:
            connection.send(wire.error(wire.TOOL_CONFLICT, f"provider name {name!r} is taken by {why}; connect "
                                                           "under another name"))
            return None
        connection.send(wire.hello_ack(name))
        self._changed()
        return provider

    def _update(self, provider: _Provider, update: wire.ToolsUpdate) -> None:
        try:
            added = _by_python_name(update.tools)
        except wire.ProtocolError as exc:
            provider.connection.send(wire.error(exc.code, f"tools.update refused: {exc}"))
            return
        with self._lock:
            specs = {k: s for k, s in provider.specs.items() if s.name not in update.remove and k not in update.remove}
            specs.update(added)
            if len({s.name for s in specs.values()}) != len(specs):
                clash = True
            else:
                clash = False
                provider.specs = specs
        if clash:
            provider.connection.send(wire.error(wire.TOOL_CONFLICT, "tools.update refused: two tools would have "
                                                                    "the same Python name"))
            return
        self._changed()

    def _settle(self, provider: _Provider, result: wire.ToolResult) -> None:
        with self._lock:
            waiter = provider.pending.pop(result.id, None)
        if waiter is None:
            provider.connection.send(wire.error(wire.UNKNOWN_CALL, f"no call {result.id!r} is waiting (it ended at "
                                                                   "its run's deadline, or was never made)"))
            return
        if result.error is not None:
            code = f" [{result.error_code}]" if result.error_code else ""
            waiter.settle(error=ProviderToolError(f"{waiter.tool}(): live provider {provider.name!r} reported an "
                                                  f"error{code}: {result.error}"))
            return
        size = len(json.dumps(result.result, ensure_ascii=False).encode("utf-8"))
        if size > self._max_result:
            message = (f"the result of {size} bytes is over the {self._max_result}-byte tool-result cap")
            provider.connection.send(wire.error(wire.RESULT_TOO_LARGE, f"call {result.id!r} refused: {message}"))
            waiter.settle(error=ProviderToolError(f"{waiter.tool}(): live provider {provider.name!r} answered, but "
                                                  f"{message}; ask for less"))
            return
        waiter.settle(result.result)

    def _drop(self, provider: _Provider) -> None:
        with self._lock:
            if self._providers.get(provider.name) is provider:
                del self._providers[provider.name]
            pending, provider.pending = provider.pending, {}
        for waiter in pending.values():
            waiter.settle(error=ProviderGone(f"{waiter.tool}(): live provider {provider.name!r} disconnected "
                                             "before answering; the call may or may not have taken effect"))
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            try:
                self._on_change()
            except Exception:  # noqa: BLE001 - the server's callback must not break a provider's connection
                pass


def identifier(name: str) -> str:
    """A provider's tool name as a Python name: other characters become ``_``; ``t`` before a leading digit or
    ``_`` (no private-looking member); ``_`` after a keyword."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name)
    if not text or not (text[0].isalpha()):
        text = "t" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text


def _by_python_name(specs: Iterable[wire.ToolSpec]) -> dict[str, wire.ToolSpec]:
    """``specs`` keyed by the Python name programs call; two tools with one Python name are a conflict."""
    out: dict[str, wire.ToolSpec] = {}
    for spec in specs:
        py_name = identifier(spec.name)
        if py_name in out:
            raise wire.ProtocolError(wire.TOOL_CONFLICT, f"tools {out[py_name].name!r} and {spec.name!r} have the "
                                                         f"same Python name {py_name!r}")
        out[py_name] = spec
    return out


__all__ = ["PATH", "ProviderGone", "ProviderHub", "ProviderToolError"]
