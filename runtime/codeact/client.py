"""The launcher's thin client: hand ``codeact run`` to this workspace's warm server, or run it here.

The launcher execs this module under ``python -S`` (no site-packages): it imports the standard library's small
modules (``os``, ``_socket``, ``marshal``, ``_sha256``) and the runtime's leaves; tests/server/test_client_start.py
holds it to that. Everything else (``codeact.cli``, pydantic-monty, the MCP SDK) is imported only on the path that
runs in this process.

The path taken:
- ``CODEACT_SERVER=0``, Windows, ``--help``, or a subcommand other than ``run``, ``tools``, ``describe`` and
  ``search``: the full command line, in this process. ``tools``, ``describe`` and ``search`` go to a server only
  when one already runs (it knows the live providers' tools) and never start one.
- Otherwise: connect to the server of this workspace (a Unix socket in a private 0700 folder), starting one if none
  answers, and send it the run (arguments, folder, environment, the program from stdin). Until the server has
  ACCEPTED the run, any failure (no socket folder, a socket of another user, a server that does not start) falls
  back to running here; once it has accepted, a server that stops makes the run fail, and it is never retried, so
  no tool runs twice. A server that does not accept within :data:`ACCEPT_WAIT_S` gets the run withdrawn (then it
  can never start it) and the run goes on here.
- The accepted run's wall limit comes with the acceptance (``wall_s``); :data:`KILL_MARGIN_S` past it the server is
  taken for stuck (a tool holding its interpreter, which no thread there can notice): the client kills it and the
  run fails; the next run starts a fresh server.
- The command line is read by :mod:`codeact.cmdline`, as argparse reads it; one argparse would refuse runs here.

The wire protocol (frames, their types and their checks) is :mod:`codeact.frames`.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import _socket as socket  # the C module: `socket` imports selectors and enum, which the client does not use
import os
import stat
import sys

from . import cmdline
from .frames import PROTOCOL, BadFrame, check_reply, receive, send
from .privatedir import ensure_private_dir
from .rundir import install_root, server_folder, socket_path, workspace_of  # noqa: F401 - used by callers
from .sigint import honour_ctrl_c

TYPE_CHECKING = False  # not `typing` at run time
if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from .frames import Reply, Request

SERVER_STOPPED = "the CodeAct server stopped during this run; tools may already have run"
START_WAIT_S = 30.0  # how long a client waits for a server it started to listen
ACCEPT_WAIT_S = 1.0  # how long a client waits for a server to accept its run (a healthy one answers in milliseconds)
KILL_MARGIN_S = 0.5  # past the server's own abandonment (its wall_s): the client stops waiting, and the server goes


class Unreachable(Exception):
    """The server could not be reached or started; the run has not been handed over (safe to run here)."""


class Refused(Unreachable):
    """What is at the socket's path is not this user's socket: no server is started in its place."""


# ---- where the server of a workspace listens -------------------------------------------------------------------

def private_folder(folder: str, *, create: bool = True) -> str:
    """``folder``, made if missing, checked to be a real folder of this user that no one else may enter; raises
    :class:`Unreachable` with the reason otherwise (another user's folder, a link, group or world access)."""
    try:
        ensure_private_dir(folder, what="server folder", create=create, tighten=False)
    except OSError as exc:
        raise Unreachable(str(exc)) from None
    return folder


def connect(path: str, timeout: float | None = None) -> socket.socket:
    """A connection to the server at ``path``, after checking the socket belongs to this user; raises
    :class:`Unreachable`."""
    try:
        st = os.lstat(path)
    except OSError:
        raise Unreachable("no server listens") from None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        raise Refused(f"{path} is not a socket of this user; refusing it")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError as exc:
        sock.close()
        raise Unreachable(f"the server does not answer ({exc.strerror or exc})") from None
    if not peer_is_this_user(sock):  # the name may have changed between lstat and connect: the peer decides
        sock.close()
        raise Refused(f"the process listening on {path} does not run as this user; refusing it")
    sock.settimeout(None)
    return sock


def peer_ids(sock: socket.socket) -> "tuple[int, int] | None":
    """``(pid, uid)`` of the process at the other end of a connected Unix socket (``SO_PEERCRED``: struct ucred,
    three 32-bit ints); ``None`` where the platform has no such option. Raises OSError when the kernel refuses."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, 12)
    return int.from_bytes(creds[0:4], sys.byteorder), int.from_bytes(creds[4:8], sys.byteorder)


def peer_is_this_user(sock: socket.socket) -> bool:
    """Whether the connected peer runs as this user (where ``SO_PEERCRED`` is missing, the lstat check and the 0700
    folder are the guard). Both ends check it: a request carries the client's whole environment, tokens included,
    and a server runs what it is sent."""
    try:
        ids = peer_ids(sock)
    except OSError:
        return False
    return ids is None or ids[1] == os.getuid()


def request(path: str, message: "Request", kinds: "tuple[str, ...]", timeout: float = 5.0) -> "Reply | None":
    """One request answered by one frame of one of ``kinds`` (ping, status, stop); ``None`` when no server answers
    (or one answers with a frame that is not one of them: it is not a server of this protocol)."""
    try:
        sock = connect(path, timeout)
    except Unreachable:
        return None
    try:
        sock.settimeout(timeout)
        send(sock, message)
        return check_reply(receive(sock), kinds)
    except (OSError, BadFrame):
        return None
    finally:
        sock.close()


# ---- starting a server ------------------------------------------------------------------------------------------

def start_server(path: str, workspace: str, environ: "dict[str, str]", wait: float = START_WAIT_S) -> None:
    """Start the server for ``workspace`` in the background (its own session and process group, detached from
    this terminal) and wait until it listens; raises :class:`Unreachable` when it does not."""
    import time

    folder = os.path.dirname(path)
    log = path[:-len(".sock")] + ".log"
    entry = ("import sys; del sys.path[0]; sys.dont_write_bytecode = False; "
             "from codeact.server.daemon import main; sys.exit(main())")
    argv = [sys.executable, "-s", "-c", entry, "--socket", path, "--workspace", workspace]
    env = dict(environ)
    env["PYTHONPATH"] = install_root()
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            pid = os.posix_spawn(sys.executable, argv, env, setsid=True, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, fd, 2)])
        finally:
            os.close(fd)
    except OSError as exc:
        raise Unreachable(f"cannot start the server in {folder}: {exc.strerror or exc}") from None
    until = time.monotonic() + wait
    pause = 0.002
    while time.monotonic() < until:
        if os.path.exists(path):
            if request(path, {"op": "ping", "protocol": PROTOCOL}, ("pong",), timeout=2.0) is not None:
                return
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done:  # it exited: another client's server won the lock (then it listens soon), or it failed
            if os.path.exists(path) and request(path, {"op": "ping", "protocol": PROTOCOL}, ("pong",), timeout=2.0):
                return
            if os.waitstatus_to_exitcode(status) != 0:
                raise Unreachable(f"the server did not start (exit {os.waitstatus_to_exitcode(status)}; see {log})")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    raise Unreachable(f"the server did not listen within {wait:g} s (see {log})")


# ---- one run ---------------------------------------------------------------------------------------------------

def hand_over(argv: "list[str]", environ: "dict[str, str]", cwd: str, program: "str | None" = None,
              start: bool = True) -> int:
    """Run ``codeact ARGV`` on the warm server (``program``: what ``-`` read from stdin); :class:`Unreachable`
    when it was not handed over."""
    import time

    parsed = cmdline.parse(argv)
    if parsed is None:
        raise Unreachable("a command line the server does not read (argparse says why)")
    folder = private_folder(server_folder(environ))
    workspace = workspace_of(parsed.value("--workspace"), cwd)
    path = socket_path(folder, workspace)
    message: Request = {"op": "run", "protocol": PROTOCOL, "argv": argv, "cwd": cwd, "env": environ,
                        "stdin": program, "workspace": workspace}
    for attempt in range(3):
        try:
            sock = connect(path)
        except Refused:
            raise
        except Unreachable:
            if not start:
                raise
            start_server(path, workspace, environ)
            sock = connect(path)
        try:
            began = time.monotonic()
            try:
                sock.settimeout(ACCEPT_WAIT_S)
                send(sock, message)
                first = receive(sock)
            except TimeoutError:
                first = _withdraw(sock)  # the server does not answer (a run holds its interpreter): run here
                if first is None:
                    raise Unreachable(f"the server did not accept the run within {ACCEPT_WAIT_S:g} s") from None
            except OSError as exc:
                raise Unreachable(f"lost the server before it accepted the run ({exc})") from None
            except BadFrame as exc:
                raise Unreachable(f"the server answered with a malformed frame ({exc})") from None
            wall = _accepted(first, start)  # None: not accepted by this server (retry with a fresh one)
            if wall is not None:  # from here on nothing may run it again (no Unreachable)
                return _follow(sock, began + wall + KILL_MARGIN_S)
        finally:
            sock.close()
    raise Unreachable("the server kept asking for a restart")


def _accepted(first: "dict[str, object] | None", start: bool) -> "float | None":
    """The run's wall limit when the server's first answer accepted it; ``None`` when the run goes to a fresh
    server (a superseded one, one that just exited: ``retry`` or nothing); :class:`Unreachable` when it is refused,
    malformed, or no fresh server may be started."""
    try:
        answer = None if first is None else check_reply(first, ("accepted", "retry", "refused"))
    except BadFrame as exc:  # not accepted: nothing ran, it may run here
        raise Unreachable(f"the server answered with a malformed frame ({exc})") from None
    if answer is not None and "accepted" in answer:
        return float(answer["wall_s"])
    if answer is not None and "refused" in answer:
        raise Unreachable(answer["refused"])
    if not start:
        raise Unreachable("no server serves this configuration")
    return None


def _withdraw(sock: socket.socket) -> "dict[str, object] | None":
    """Take back a run the server has not accepted in time: from now on its writes to this connection fail, so it
    can never start the run. The answer it gave just before, if any (then the run was accepted)."""
    try:
        sock.shutdown(socket.SHUT_RD)  # the peer's sends now fail (EPIPE): it never gets to run it
        sock.setblocking(False)
        return receive(sock)  # an "accepted" already here
    except (OSError, BadFrame):
        return None


def _follow(sock: socket.socket, until: "float | None" = None) -> int:
    """Copy the accepted run's output frames to this process's streams; its exit code. Past ``until`` (the run's
    deadline plus the server's grace) the server is taken for stuck: it is killed and the run fails."""
    import time

    out, err = sys.stdout, sys.stderr
    while True:
        try:
            if until is not None:
                sock.settimeout(max(until - time.monotonic(), 0.001))
            raw = receive(sock)
            got = None if raw is None else check_reply(raw, ("out", "err", "exit"))
        except TimeoutError:
            pid = kill_server(sock)
            err.write(f"codeact: the run did not end by its deadline (its time limit plus the server's grace): the "
                      f"server (pid {pid}) does not answer, a tool holds it; it was stopped and the next run starts "
                      "a fresh one\n")
            err.flush()
            return 1
        except BadFrame as exc:
            err.write(f"codeact: the server sent a malformed frame during the run ({exc}); tools may already have "
                      "run\n")
            err.flush()
            return 1
        if got is None:
            err.write(f"codeact: {SERVER_STOPPED}\n")
            err.flush()
            return 1
        try:
            if "out" in got:
                out.write(got["out"])
                out.flush()
            elif "err" in got:
                err.write(got["err"])
                err.flush()
        except OSError:  # our own stdout or stderr closed (`| head`): the run goes on; it must not run again here
            _quiet(out, err)
            return 1
        if "exit" in got:
            return got["exit"]


def peer_pid(sock: socket.socket) -> int:
    """The process id of the connected server (``SO_PEERCRED``), 0 where it is unknown."""
    try:
        ids = peer_ids(sock)
    except OSError:
        return 0
    return ids[0] if ids else 0


def kill_server(sock: socket.socket) -> int:
    """Kill the server at the other end of ``sock`` (this user's, checked at connect) and its process group (its
    Monty workers, the tools it started); its pid."""
    import signal

    pid = peer_pid(sock)
    if pid > 0:
        try:
            if os.getpgid(pid) == pid:  # the server leads its own session (start_server)
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pid


def _quiet(*streams: "object") -> None:
    """Point closed standard streams at /dev/null, so that the interpreter's exit does not fail flushing them."""

    null = os.open(os.devnull, os.O_WRONLY)
    for stream in streams:
        try:
            os.dup2(null, stream.fileno())  # type: ignore[attr-defined]
        except (OSError, AttributeError, ValueError):
            pass
    os.close(null)


USER_PYTHONPATH = "CODEACT_USER_PYTHONPATH"


def restore_pythonpath(env: "MutableMapping[str, str]") -> None:
    """Give ``env`` the user's ``PYTHONPATH`` back, as the launcher saved it in ``CODEACT_USER_PYTHONPATH`` ('=' and
    its value; anything else: it was unset): what a run starts (bash, MCP servers) sees it as under the Copilot CLI,
    while this process imports only the runtime's. Without that variable (no launcher) nothing changes."""
    saved = env.pop(USER_PYTHONPATH, None)
    if saved is None:
        return
    if saved.startswith("="):
        env["PYTHONPATH"] = saved[1:]
    else:
        env.pop("PYTHONPATH", None)


def _in_process(argv: "list[str]", program: "str | None" = None) -> int:
    """The full command line in this process: site-packages first (the launcher started Python with -S)."""
    import site

    restore_pythonpath(os.environ)

    site.ENABLE_USER_SITE = False  # as -s: the user's site-packages never shadow the venv's
    site.main()
    from codeact.cli import main as cli_main

    return int(cli_main(argv, stdin=program))


SERVED = tuple(cmdline.OPTIONS)  # the subcommands a server answers; only `run` starts one


def use_server(argv: "list[str]", environ: "dict[str, str] | os._Environ[str]") -> bool:
    """Whether this invocation goes to the warm server."""
    if not (argv and argv[0] in SERVED and environ.get("CODEACT_SERVER", "1") != "0" and os.name == "posix"
            and hasattr(socket, "AF_UNIX")):
        return False
    parsed = cmdline.parse(argv)
    return parsed is not None and not parsed.help  # what argparse refuses, and --help, run here


def main(argv: "list[str] | None" = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    program = None
    env = dict(os.environ)
    restore_pythonpath(env)
    try:
        cwd = os.getcwd()
    except OSError:  # the folder was deleted or moved away under the shell: no workspace can be found from it
        sys.stderr.write("codeact: the current folder no longer exists (deleted or moved); cd into your repository "
                         "and run the command again\n")
        return 2
    if use_server(args, env):
        parsed = cmdline.parse(args)
        # kept for this process; read no further than the size a run accepts (the run refuses what is past it)
        program = cmdline.read_program(sys.stdin) if parsed is not None and parsed.reads_stdin else None
        try:
            return hand_over(args, env, cwd, program, start=args[0] == "run")
        except Unreachable as exc:
            if env.get("CODEACT_SERVER_DEBUG") == "1":
                sys.stderr.write(f"codeact: running in this process ({exc})\n")
        except KeyboardInterrupt:
            sys.stderr.write("codeact: interrupted\n")
            return 130
    return _in_process(args, program)


def entry() -> None:
    """The launcher's entry: :func:`main`, then the process ends with its exit code."""
    honour_ctrl_c()
    exit_now(main())


def exit_now(code: int) -> None:
    """End the process with ``code`` as ``sys.exit`` would, without the interpreter's teardown.

    Freeing every module and object (pydantic-monty, the tools, ~230 modules) takes a cold run time and does nothing
    a finished command needs. What the teardown does that matters is done first, in its order: the ``atexit``
    callbacks (the monty pool, MCP servers, temporary folders), then flushing stdout and stderr (a failed flush ends
    the process with 120, as Python's own exit does). A Python thread that is not a daemon would be waited for
    by the interpreter: then this is plain ``sys.exit``.
    """
    threading = sys.modules.get("threading")
    if threading is not None and any(thread is not threading.main_thread() and not thread.daemon
                                     for thread in threading.enumerate()):
        sys.exit(code)
    atexit = sys.modules.get("atexit")
    if atexit is not None:
        atexit._run_exitfuncs()  # a callback's error is printed, and the exit goes on, as at a normal exit
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = 120
    os._exit(code)


__all__ = ["SERVER_STOPPED", "Refused", "Unreachable", "connect", "entry", "exit_now", "hand_over", "kill_server", "main", "peer_ids",
           "peer_is_this_user", "peer_pid", "private_folder", "receive", "request", "restore_pythonpath", "send", "server_folder",
           "socket_path", "start_server", "use_server", "workspace_of"]
