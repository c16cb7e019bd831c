"""Attacks on the warm server and its thin client: a listener of another user behind this user's socket name, and
session state the JSON file cannot hold (a program must not turn its own successful run into an internal error)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_server  # noqa: E402
from test_server import Repo  # noqa: E402

repo = test_server.repo  # the stamped-repository fixture

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the warm server needs Unix sockets (POSIX)")

_FOREIGN = """
import os, socket, sys, time
os.setgid(65534); os.setuid(65534)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(sys.argv[1]); sock.listen(4)
print("listening", flush=True)
sock.settimeout(float(sys.argv[3]))
got = b""
try:
    while True:
        conn, _ = sock.accept()
        conn.settimeout(2)
        try:
            while chunk := conn.recv(65536):
                got += chunk
        except OSError:
            pass
        conn.close()
except OSError:
    pass
open(sys.argv[2], "wb").write(got)
"""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
def test_a_listener_of_another_user_behind_this_users_socket_is_refused(repo: Repo) -> None:
    """The socket's name is checked with lstat, then connected to: a name swapped in between (a parent folder that
    another user may write, e.g. a shared $TMPDIR) reaches a socket file this user owns, on which another user
    listens. Simulated here by chown-ing the other user's socket: the client must not hand its run (and its whole
    environment) to that listener, and the run still runs, in this process."""
    from codeact import client

    folder = client.private_folder(client.server_folder(repo.env))
    path = client.socket_path(folder, str(repo.root.resolve()),
                              install=str(repo.root.resolve() / ".codeact" / "runtime"))
    theirs = Path(tempfile.mkdtemp(prefix="cxf", dir="/tmp"))
    os.chown(theirs, 65534, 65534)
    bound, got = theirs / "s.sock", theirs / "got"
    listener = subprocess.Popen([sys.executable, "-c", _FOREIGN, str(bound), str(got), "8"], stdout=subprocess.PIPE,
                                text=True)
    try:
        assert listener.stdout is not None and listener.stdout.readline() == "listening\n"
        os.chown(bound, os.getuid(), os.getgid())  # what lstat will see: a socket of this user
        os.rename(bound, path)
        with pytest.raises(client.Refused, match="does not run as this user"):
            client.connect(path, timeout=2)
        done = repo("run", "--code", "print(6 * 7)", env={"CODEACT_SERVER_DEBUG": "1", "RT_MARK": "secret-token"})
        assert done.returncode == 0 and done.stdout == "42\n", done.stderr
        assert "does not run as this user" in done.stderr
    finally:
        listener.wait(timeout=30)
        if os.path.lexists(path):
            os.unlink(path)
    assert b"secret-token" not in got.read_bytes(), "the other user's listener got the run's environment"


def test_a_session_global_json_cannot_write_is_dropped_not_an_internal_error(repo: Repo) -> None:
    """An int past Python's digit limit for decimal text (`10**5000`) cannot be written as JSON: the run, which
    succeeded, used to fail with an internal-error traceback when its state was saved."""
    first = repo("run", "--session", "big", "--code", "x = 10**5000\ny = [1, 2]\nprint('set')")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "set\n" and "Traceback" not in first.stderr
    second = repo("run", "--session", "big", "--json", "--code", "y")
    assert json.loads(second.stdout)["result"] == [1, 2], second.stderr
    gone = repo("run", "--session", "big", "--code", "x")
    assert gone.returncode != 0 and "'x' is not defined" in gone.stderr


def test_a_session_file_with_a_keyword_or_deep_nesting_starts_empty(repo: Repo) -> None:
    """A state file the runtime did not write (a keyword as a name, nesting deeper than json.loads goes) does not
    make every later run of the session fail."""
    from codeact.core import sessions

    workspace = repo.root.resolve()
    env = repo.env
    keyword = sessions.state_file(workspace, "kw", env)
    keyword.parent.mkdir(parents=True, exist_ok=True)
    keyword.write_text(json.dumps({"if": 1, "ok": 2}))
    deep = sessions.state_file(workspace, "deep", env)
    deep.write_text("[" * 200_000 + "]" * 200_000)
    kept = repo("run", "--session", "kw", "--json", "--code", "ok")
    assert kept.returncode == 0 and json.loads(kept.stdout)["result"] == 2, kept.stderr
    fresh = repo("run", "--session", "deep", "--code", "print(1)")
    assert fresh.returncode == 0 and fresh.stdout == "1\n", fresh.stderr


def test_a_closed_stdout_after_acceptance_does_not_run_the_program_again(repo: Repo, tmp_path: Path) -> None:
    """`codeact run ... | true`: writing the accepted run's output fails (EPIPE). That used to count as "lost the
    server before it accepted the run", so the client ran the program again in its own process: its tools twice."""
    marks = tmp_path / "marks"
    program = f"bash(command='sleep 0.3; echo ran >> {marks}')\nprint('x' * 1000)\n"
    done = subprocess.run(f"'{repo.launcher}' run --timeout 60 - | true", shell=True, input=program, text=True,
                          cwd=repo.root, env={**repo.env, "CODEACT_SERVER_DEBUG": "1"}, capture_output=True,
                          timeout=120)
    assert "running in this process" not in done.stderr, done.stderr
    assert marks.read_text() == "ran\n", f"the program ran {marks.read_text().count('ran')} times: {done.stderr}"
