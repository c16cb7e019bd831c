"""The server process: one per user, install and workspace, listening on a Unix socket in a private folder.

Started detached by the launcher's client (``codeact.client.start_server``) or by ``codeact server start``; at most
one runs per socket (a lock file beside it). It serves only the configuration it was started with
(``codeact.server.confighash``): a request with another hash is answered ``retry`` and this server retires at once
(its socket and lock go, so the client starts a fresh one; runs in flight finish). It exits after
``CODEACT_SERVER_IDLE`` seconds (default 600) without a run, never while a run or a live provider is connected.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import client, frames
from ..errors import EXIT_OK, EXIT_USAGE

DEFAULT_IDLE_S = 600.0
_STOP_GRACE_S = 5.0  # `server stop`: how long runs in flight may finish


def idle_timeout(environ: os._Environ[str] | dict[str, str]) -> float:
    """``CODEACT_SERVER_IDLE`` in seconds (default 600); a bad value falls back to the default."""
    try:
        value = float(environ.get("CODEACT_SERVER_IDLE") or DEFAULT_IDLE_S)
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


class Server:
    """Accepts connections, each handled by a thread of its own (kept for the next one); a run request is executed
    by :mod:`codeact.server.runs`."""

    def __init__(self, path: str, workspace: Path, environ: dict[str, str]) -> None:
        from .confighash import config_hash

        self.path, self.workspace = path, workspace
        self.idle_s = idle_timeout(environ)
        self.config_hash = config_hash(workspace, environ)
        self.started_at = time.time()
        self.active = 0
        self.runs: dict[int, _Run] = {}  # the runs in flight, not abandoned
        self.last_used = time.monotonic()
        self.retired = False
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._deadlines = threading.Condition(self._lock)  # a run came: the deadline watcher looks again
        self._listener: socket.socket | None = None
        self._lock_fd: int | None = None
        self._inode: tuple[int, int] | None = None
        self.providers: Any = None  # the live-provider hub, when enabled (codeact.server.live)
        self._handlers = _Handlers(self._handle)

    # ---- lifetime -------------------------------------------------------------------------------------------
    def claim(self) -> bool:
        """Take the socket's lock; ``False`` when another server holds it (it serves this socket)."""
        import fcntl

        fd = os.open(self.path[:-len(".sock")] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # `server status` names a server that does not answer
        self._lock_fd = fd
        return True

    def listen(self) -> None:
        with _umask(0o177):
            try:
                st = os.lstat(self.path)
            except FileNotFoundError:
                pass
            else:  # a stale socket of a server that died (the lock says none is alive), and only our own
                import stat

                if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
                    raise client.Refused(f"{self.path} is not a socket of this user; not replacing it")
                os.unlink(self.path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(self.path)
        st = os.stat(self.path)
        self._inode = (st.st_dev, st.st_ino)
        sock.listen(64)
        self._listener = sock

    def retire(self) -> None:
        """Stop taking connections and give the socket up now (a fresh server may take it); exit when idle."""
        with self._lock:
            if self.retired:
                return
            self.retired = True
        self._release_socket()
        if self.active == 0:
            self.stopping.set()

    def _release_socket(self) -> None:
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._inode:
                os.unlink(self.path)
        except OSError:
            pass
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()

    def serve(self) -> None:
        threading.Thread(target=self._watch_idle, name="codeact-idle", daemon=True).start()
        threading.Thread(target=self._accept, name="codeact-accept", daemon=True).start()
        threading.Thread(target=self._watch_deadlines, name="codeact-deadlines", daemon=True).start()
        if hasattr(select, "POLLRDHUP"):  # Linux: a client that went away is seen at once (elsewhere: its deadline)
            threading.Thread(target=self._watch_clients, name="codeact-clients", daemon=True).start()
        self.stopping.wait()
        self._release_socket()

    def _accept(self) -> None:
        while not self.stopping.is_set() and self._listener is not None:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                if self.retired or self.stopping.is_set():
                    return
                continue
            self._handlers.dispatch(conn)

    def _watch_idle(self) -> None:
        while not self.stopping.wait(min(1.0, self.idle_s / 4)):
            with self._lock:
                idle = self.active == 0 and time.monotonic() - self.last_used >= self.idle_s
            if idle and not (self.providers is not None and self.providers.connected):
                self.stopping.set()
            from .warm import sweep

            sweep(self.idle_s)

    # ---- one connection -------------------------------------------------------------------------------------
    def _handle(self, conn: socket.socket) -> None:
        try:
            if not client.peer_is_this_user(conn):
                frames.send(conn, {"refused": "the server serves only its own user"})
                return
            try:
                raw = frames.receive(conn)
                if raw is None:
                    return
                if raw.get("op") == "run" and raw.get("protocol") != frames.PROTOCOL:
                    self.retire()  # first: the client that reads "retry" must find the socket gone and start anew
                    frames.send(conn, {"retry": "another protocol version"})
                    return
                message = frames.check_request(raw)
            except frames.BadFrame as exc:
                frames.send(conn, {"refused": f"malformed request: {exc}"})
                return
            if message["op"] == "ping":
                frames.send(conn, {"pong": True, "pid": os.getpid()})
            elif message["op"] == "status":
                frames.send(conn, self.status())
            elif message["op"] == "stop":
                frames.send(conn, {"stopping": True, "pid": os.getpid()})
                self.stop()
            else:
                self._run(conn, message)
        except OSError:
            pass  # the client went away
        finally:
            conn.close()

    def _run(self, conn: socket.socket, message: frames.RunRequest) -> None:
        from .confighash import config_hash

        if message["workspace"] != str(self.workspace):
            frames.send(conn, {"refused": f"this server serves {self.workspace}"})
            return
        if self.retired or config_hash(self.workspace, message["env"]) != self.config_hash:
            self.retire()
            frames.send(conn, {"retry": "the configuration changed"})
            return
        from .runs import execute, wall_limit

        run = _Run(conn, time.monotonic(), wall_limit(message), (message["argv"] or ["?"])[0])
        with self._lock:
            self.active += 1
            self.runs[id(run)] = run
            self._deadlines.notify_all()
        try:
            # the client gives up on its own a little after `wall_s`: a run stuck holding this interpreter (a tool
            # in C that keeps the GIL) stops this whole process, which no thread here could then notice
            frames.send(conn, {"accepted": True, "wall_s": run.limit})
            # in this connection's thread: a run stuck past its limit in code no deadline interrupts (SIGALRM reaches
            # only the main thread) is answered and abandoned by the deadline watcher (_watch_deadlines)
            code = execute(message, run.writer("out"), run.writer("err"))
            run.finish([{"exit": code}])
        finally:
            self._ended(run)

    def _ended(self, run: _Run, abandoned: bool = False) -> None:
        with self._lock:
            if abandoned or self.runs.pop(id(run), None) is not None:
                self.active -= 1
            self.last_used = time.monotonic()
            done = self.retired and self.active == 0
        if done:
            self.stopping.set()

    def _watch_deadlines(self) -> None:
        """One thread for every run's wall limit: a run past it is answered (it failed) and abandoned, and the
        server retires so that a fresh one takes over (the stuck thread goes when this process exits)."""
        with self._lock:
            while not self.stopping.is_set():
                now = time.monotonic()
                due = [run for run in self.runs.values() if now >= run.began + run.limit]
                for run in due:
                    del self.runs[id(run)]
                    # its own thread: answering may block on a client that does not read; the watcher must not
                    threading.Thread(target=self._abandon, args=(run,), name="codeact-abandon", daemon=True).start()
                nearest = min((run.began + run.limit for run in self.runs.values()), default=None)
                self._deadlines.wait(None if nearest is None else max(nearest - now, 0.01))

    def _watch_clients(self) -> None:
        """One thread for every run's client: a run whose client went away (killed, interrupted, or ended with the
        PID namespace of the bash call that started it) is abandoned at once, as one past its deadline is; its bash
        calls are killed now, and the server retires so that its program stops with this process."""
        while not self.stopping.is_set():
            with self._lock:
                while not self.runs and not self.stopping.is_set():
                    self._deadlines.wait()
                runs = {run.conn.fileno(): run for run in self.runs.values()}
            poller = select.poll()
            for fd in runs:
                if fd >= 0:
                    poller.register(fd, select.POLLRDHUP | select.POLLHUP)
            answered = 0
            for fd, _ in poller.poll(200):
                run = runs[fd]
                with self._lock:  # in flight and not answered yet: it is now ours to end
                    if run.over:  # its client read the answer and closed: the run's thread ends it
                        answered += 1
                        continue
                    if self.runs.pop(id(run), None) is None:
                        continue
                threading.Thread(target=self._client_gone, args=(run,), name="codeact-abandon", daemon=True).start()
            if answered:
                time.sleep(0.005)  # the run's own thread is about to take it off the list

    def _client_gone(self, run: _Run) -> None:
        from ..tools.shell import stop_calls

        with run.lock:
            answered, run.over = run.over, True  # nobody reads its answer
        if answered:  # answered meanwhile: nothing to end
            self._ended(run, abandoned=True)
            return
        stop_calls(run.thread)
        self.retire()
        self._ended(run, abandoned=True)

    def _abandon(self, run: _Run) -> None:
        try:
            run.finish([{"err": f"codeact: the run did not end {run.limit:g} s after it began, past its deadline; "
                                "it was abandoned and the server restarts\n"}, {"exit": 1}])
        except OSError:
            pass  # the client went away
        self.retire()
        self._ended(run, abandoned=True)

    def stop(self) -> None:
        """Stop now: no new run; runs in flight get a few seconds to finish."""
        self.retire()
        deadline = time.monotonic() + _STOP_GRACE_S
        while self.active and time.monotonic() < deadline:
            time.sleep(0.02)
        self.stopping.set()

    def status(self) -> frames.Status:
        """What ``codeact server status --json`` prints (``running`` is the caller's to add)."""
        from .warm import mcp_sessions

        return {"running": True, "pid": os.getpid(), "socket": self.path, "workspace": str(self.workspace),
                "config_hash": self.config_hash, "started_at": _iso(self.started_at),
                "idle_timeout_s": self.idle_s, "mcp_sessions": mcp_sessions(),
                "providers": self.providers.status() if self.providers is not None else None,
                "active_runs": self.active, "responding": True, "stuck": self.stuck()}

    def stuck(self) -> list[str]:
        """The runs in flight past their wall limit (each about to be abandoned), described."""
        now = time.monotonic()
        with self._lock:
            runs = list(self.runs.values())
        return [f"a `{run.command}` run {now - run.began:.1f} s old, past its {run.limit:g} s limit"
                for run in runs if now - run.began > run.limit]


class _Handlers:
    """The threads that handle connections, one at a time each, kept for the next connection when done (a thread
    started per run costs more than a trivial run's own work); a connection finds an idle one or starts one."""

    MAX_IDLE = 8

    def __init__(self, handle: Callable[[socket.socket], None]) -> None:
        import queue

        self._handle = handle
        self._waiting: queue.SimpleQueue[socket.socket] = queue.SimpleQueue()
        self._idle = 0  # threads waiting on the queue, each for one connection
        self._lock = threading.Lock()

    def dispatch(self, conn: socket.socket) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._waiting.put(conn)
                return
        threading.Thread(target=self._serve, args=(conn,), name="codeact-run", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        while True:
            self._handle(conn)  # a run stuck here is abandoned with its thread (Server._watch_deadlines)
            with self._lock:
                if self._idle >= self.MAX_IDLE:
                    return
                self._idle += 1
            conn = self._waiting.get()


class _Run:
    """A run in flight: its connection, when it began, its wall limit (seconds) and subcommand. Once it is answered
    (its exit, or its abandonment) nothing more is sent for it."""

    def __init__(self, conn: socket.socket, began: float, limit: float, command: str) -> None:
        self.conn, self.began, self.limit, self.command = conn, began, limit, command
        self.thread = threading.get_ident()  # the thread that runs it (and makes its tool calls)
        self.over = False
        self.lock = threading.Lock()

    def writer(self, key: str) -> Callable[[str], None]:
        """What the run prints on ``key`` (``out``, ``err``), as frames, until it is answered."""
        def write(text: str) -> None:
            if text:
                with self.lock:
                    if not self.over:
                        frame: frames.Reply = {"out": text}
                        if key == "err":
                            frame = {"err": text}
                        frames.send(self.conn, frame)
        return write

    def finish(self, last: list[frames.Reply]) -> None:
        """Send the run's ``last`` frames, unless it was answered already."""
        with self.lock:
            if self.over:
                return
            self.over = True
            for frame in last:
                frames.send(self.conn, frame)


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


class _umask:
    def __init__(self, mask: int) -> None:
        self.mask, self.old = mask, 0

    def __enter__(self) -> None:
        self.old = os.umask(self.mask)

    def __exit__(self, *exc: object) -> None:
        os.umask(self.old)


def main(argv: list[str] | None = None) -> int:
    """``python -c 'from codeact.server.daemon import main; main()' --socket PATH --workspace DIR``."""
    parser = argparse.ArgumentParser(prog="codeact-server", allow_abbrev=False,
                                     description="The warm CodeAct server of one workspace (started by the launcher).")
    parser.add_argument("--socket", required=True, help="the Unix socket to listen on")
    parser.add_argument("--workspace", required=True, help="the workspace it serves")
    args = parser.parse_args(argv)
    from ..core.boundary import workspace_refusal

    refused = workspace_refusal(args.workspace)  # a refused workspace gets no server (the run says why, exit 2)
    if refused:
        print(f"codeact server: {refused}", file=sys.stderr)
        return EXIT_USAGE
    try:
        client.private_folder(os.path.dirname(args.socket))
    except client.Unreachable as exc:
        print(f"codeact server: {exc}", file=sys.stderr)
        return EXIT_USAGE
    server = Server(args.socket, Path(args.workspace), dict(os.environ))
    if not server.claim():
        return EXIT_OK  # another server holds this socket's lock
    from . import streams
    from .warm import warm_up

    streams.install()
    warm_up(server)
    try:
        server.listen()
    except (OSError, client.Unreachable) as exc:
        print(f"codeact server: cannot listen on {args.socket}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"codeact server {os.getpid()} listening on {args.socket} for {args.workspace}", file=sys.stderr,
          flush=True)
    _stop_on_signals(server)
    try:
        server.serve()
    finally:
        _end(server)
    print(f"codeact server {os.getpid()} stopped", file=sys.stderr, flush=True)
    sys.stderr.flush()
    os._exit(0)  # daemon threads (runs abandoned at stop, MCP readers) must not delay the exit


def _stop_on_signals(server: Server) -> None:
    """SIGTERM and SIGHUP (a logout, ``kill``, a service manager) stop the server as ``server stop`` does, through
    :func:`_end`: their default action would end the process at once, leaving what its runs started running."""
    import signal

    def stop(_signum: int, _frame: Any) -> None:
        server.stopping.set()  # serve() returns: the socket goes, then _end

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)


def _end(server: Server) -> None:
    """Stop everything the server's runs started: MCP sessions, providers, workers, bash calls, discoveries."""
    from ..mcp.prespawn import stop_every_discovery
    from ..tools.shell import stop_calls
    from .warm import wind_down

    try:
        stop_every_discovery()  # first: a discovery in a run's thread has no finally to run
        wind_down(server)
    finally:
        stop_calls()  # the bash calls of runs abandoned or cut short: nothing a call started outlives the server


__all__ = ["DEFAULT_IDLE_S", "Server", "idle_timeout", "main"]
