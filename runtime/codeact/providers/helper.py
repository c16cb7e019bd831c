"""A live provider in a few lines: Python functions lent to CodeAct programs as ``name.function(...)``.

    from codeact.providers.helper import Provider

    app = Provider("notes", context="The user's open notes app.")

    @app.tool
    def search(query: str, limit: int = 5) -> list[dict]:
        "Find notes whose text contains query."
        return [...]

    app.serve(state_dir=FOLDER)      # or app.serve(url, token); reconnects when the server restarts

Or from a shell: ``python -m codeact.providers.helper notes tools.py --state-dir FOLDER`` lends the public
functions of ``tools.py``. Each call runs in its own thread, so calls made in parallel are answered in parallel.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import inspect
import runpy
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.tool import tool_from_function
from ..errors import CodeactError
from . import protocol as wire
from .state import STATUS_FILE, read_status


class ProviderRefused(CodeactError, RuntimeError):
    """The server refused this provider (its token, name or tools); ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class Provider:
    """A named set of tools served to a CodeAct provider hub; ``context`` is what ``codeact describe NAME`` shows."""

    def __init__(self, name: str, context: str | None = None) -> None:
        self.name = name
        self.context = context
        self._functions: dict[str, Callable[..., Any]] = {}
        self._specs: dict[str, wire.ToolSpec] = {}
        self._stopping = threading.Event()
        self._registered = threading.Event()
        self._connection: Any = None
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None  # why a background serve ended

    def tool(self, func: Callable[..., Any] | None = None, *, name: str | None = None,
             description: str | None = None) -> Any:
        """Decorator: lend ``func``; its parameters' annotations make the JSON Schema, its docstring the
        description. ``@provider.tool`` or ``@provider.tool(name=..., description=...)``."""
        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            built = tool_from_function(f, name=name, description=description)
            self._functions[built.name] = f
            self._specs[built.name] = wire.ToolSpec(built.name, built.description, built.parameters)
            return f

        return register(func) if func is not None else register

    # -- serving ----------------------------------------------------------------------------------------------

    def serve(self, url: str | None = None, token: str | None = None, *, state_dir: Path | str | None = None,
              workspace: Path | str | None = None, reconnect: bool = True, retry: float = 1.0) -> None:
        """Connect and answer calls until :meth:`stop` (or, without ``reconnect``, until the connection ends).
        ``state_dir`` (the server's folder) gives the URL and token, read again at each reconnection; where several
        servers keep their files there, the one serving ``workspace`` (default: the repository of the current
        folder, as ``codeact run`` finds it). Raises :class:`ProviderRefused` when the server refuses the token, the
        name or the tools, or when no server there serves that workspace (``AMBIGUOUS``)."""
        if state_dir is None and (url is None or token is None):
            raise ValueError("give url and token, or state_dir")
        while not self._stopping.is_set():
            try:
                self._session(*_endpoint(url, token, state_dir, workspace))
            except ProviderRefused:
                raise
            except (OSError, EOFError, ValueError, RuntimeError):  # no server yet, or it went away
                pass
            self._registered.clear()
            if not reconnect or self._stopping.wait(retry):
                return

    def start(self, url: str | None = None, token: str | None = None, *, state_dir: Path | str | None = None,
              workspace: Path | str | None = None, timeout: float = 10.0, **options: Any) -> Provider:
        """:meth:`serve` in a background thread; returns once registered (``TimeoutError`` if not within
        ``timeout`` s, with the server's refusal as its cause)."""
        def target() -> None:
            try:
                self.serve(url, token, state_dir=state_dir, workspace=workspace, **options)
            except BaseException as exc:  # noqa: BLE001 - kept for start() and the caller
                self.error = exc

        self._thread = threading.Thread(target=target, name=f"codeact-provider-{self.name}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._registered.wait(0.02):
            if self.error is not None or time.monotonic() > deadline:
                raise TimeoutError(f"provider {self.name!r} was not registered within {timeout:g} s") \
                    from self.error
        return self

    def wait_registered(self, timeout: float = 10.0) -> bool:
        """Whether the provider is registered (waiting up to ``timeout`` s), e.g. after a server restart."""
        return self._registered.wait(timeout)

    def stop(self) -> None:
        """Say goodbye and stop serving."""
        self._stopping.set()
        connection = self._connection
        if connection is not None:
            try:
                connection.send(wire.goodbye())
                connection.close()
            except Exception:  # noqa: BLE001 - already closed
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _session(self, url: str, token: str) -> None:
        from urllib.parse import urlsplit

        from websockets.sync.client import connect

        from .peer import connect_own

        parts = urlsplit(url)  # the token goes only to a listener of this user (codeact.providers.peer)
        sock = connect_own(parts.hostname or "127.0.0.1", parts.port or 80, 5)
        with connect(url, sock=sock, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=5,
                     max_size=None, compression=None, proxy=None) as connection:
            self._connection = connection
            try:
                connection.send(wire.hello(self.name, list(self._specs.values()), self.context))
                for frame in connection:
                    message = wire.parse(frame)
                    if isinstance(message, wire.HelloAck):
                        self._registered.set()
                    elif isinstance(message, wire.Error) and not self._registered.is_set():
                        raise ProviderRefused(message.code, message.message)
                    elif isinstance(message, wire.ToolCall):
                        threading.Thread(target=self._answer, args=(connection, message), daemon=True,
                                         name=f"codeact-provider-call-{message.id}").start()
            finally:
                self._connection = None

    def _answer(self, connection: Any, call: wire.ToolCall) -> None:
        func = self._functions.get(call.tool)
        try:
            if func is None:
                raise LookupError(f"no tool {call.tool!r} here")
            frame = wire.tool_result(call.id, func(**call.args))
        except Exception as exc:  # noqa: BLE001 - the program sees it as the tool's error
            frame = wire.tool_error(call.id, f"{type(exc).__name__}: {exc}", type(exc).__name__)
        try:
            connection.send(frame)
        except Exception:  # noqa: BLE001 - the connection closed meanwhile; the server failed the call
            pass


def _endpoint(url: str | None, token: str | None, state_dir: Path | str | None,
              workspace: Path | str | None = None) -> tuple[str, str]:
    if state_dir is None:
        return str(url), str(token)
    folder = Path(state_dir)
    _trusted_folder(folder)
    status = read_status(folder, _stem(folder, workspace))
    if not status.get("url") or not status.get("token_file"):
        raise OSError(f"no provider hub status in {state_dir} (is the CodeAct server running with providers on?)")
    return url or _loopback(str(status["url"]), folder), token or _token(Path(str(status["token_file"])), folder)


def _trusted_folder(folder: Path) -> None:
    """Refuse a state folder another user could have written (a link, another user's, or open to others): its
    status file names where the token is sent and which file is the token."""
    from ..privatedir import ensure_private_dir

    try:
        ensure_private_dir(folder, what="provider state folder", create=False, tighten=False)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ProviderRefused("UNTRUSTED", f"{exc}; the server's own state folder is private to you") from None


def _loopback(url: str, folder: Path) -> str:
    """The hub's URL from a status file: the hub listens on this machine's loopback only."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "ws" or parts.hostname not in ("127.0.0.1", "::1", "localhost"):
        raise ProviderRefused("UNTRUSTED", f"the status file in {folder} names {url!r}; a CodeAct hub listens on "
                                           "ws://127.0.0.1 only")
    return url


def _token(path: Path, folder: Path) -> str:
    """The token from the file a status file names: a regular file of this user inside the state folder."""
    import os
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        raise OSError(f"the provider token file {path} is missing (is the CodeAct server running?)") from None
    inside = os.path.realpath(path.parent) == os.path.realpath(folder)
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    if not (stat.S_ISREG(st.st_mode) and inside and mine):
        raise ProviderRefused("UNTRUSTED", f"the status file in {folder} names {path} as the token file: not a file "
                                           "of yours in that folder")
    return path.read_text(encoding="utf-8").strip()


def _stem(folder: Path, workspace: Path | str | None = None) -> str:
    """The status file's stem in ``folder``: "" for ``providers.json``, else that of the one ``STEM.providers.json``
    there, or where there are several, that of the server for ``workspace`` (the server names its files after its
    socket, one per install and workspace: :func:`codeact.rundir.socket_path`)."""
    import os

    from ..rundir import socket_path, workspace_of

    if (folder / STATUS_FILE).exists():
        return ""
    found = sorted(p.name[:-len(STATUS_FILE) - 1] for p in folder.glob(f"*.{STATUS_FILE}"))
    if len(found) <= 1 and workspace is None:  # one server: the one to join (workspace= asks for a given one)
        return found[0] if found else ""
    served = workspace_of(None if workspace is None else os.fspath(workspace), os.getcwd())
    mine = os.path.basename(socket_path(str(folder), served))[:-len(".sock")]
    if mine in found:
        return mine
    raise ProviderRefused("AMBIGUOUS", f"{folder} holds the status of {len(found)} server(s) "
                          f"({', '.join(found) or 'none'}), none for {served}: pass workspace= (--workspace) naming "
                          "the repository the server works in, or the URL and token file")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m codeact.providers.helper NAME FILE.py``: lend the public functions of FILE.py as NAME.*."""
    parser = argparse.ArgumentParser(prog="python -m codeact.providers.helper", description=main.__doc__)
    parser.add_argument("name", help="the provider's name: programs call NAME.function(...)")
    parser.add_argument("file", help="a Python file; its public functions become the tools")
    parser.add_argument("--state-dir", help="the CodeAct server's folder (gives the URL and token file)")
    parser.add_argument("--workspace", help="with --state-dir: the repository whose server to join, where several "
                                            "servers keep their files there (default: the current folder's)")
    parser.add_argument("--url", help="the hub's URL (codeact server status --json: providers.url)")
    parser.add_argument("--token-file", help="the file holding the token (providers.token_file)")
    parser.add_argument("--context", help="what `codeact describe NAME` shows about this provider")
    args = parser.parse_args(argv)
    if not args.state_dir and not (args.url and args.token_file):
        parser.error("give --state-dir, or --url and --token-file")
    provider = Provider(args.name, context=args.context)
    namespace = runpy.run_path(args.file)
    for key, value in namespace.items():
        if inspect.isfunction(value) and not key.startswith("_") and value.__module__ == "<run_path>":
            provider.tool(value)
    token = Path(args.token_file).read_text(encoding="utf-8").strip() if args.token_file else None
    try:
        provider.serve(args.url, token, state_dir=args.state_dir, workspace=args.workspace)
    except ProviderRefused as exc:
        print(f"codeact provider: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        provider.stop()
    return 0


__all__ = ["Provider", "ProviderRefused", "main"]

if __name__ == "__main__":
    sys.exit(main())
