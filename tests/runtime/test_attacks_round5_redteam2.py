"""Red team 2, round 5 (issue 40): each test is one attempt that broke through a round-5 fix, as the attacker ran
it. They fail until the hole is closed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_attacks_round4 import Launcher, launcher  # noqa: F401 - the fixture
from test_attacks_round5 import _running, provider_hub  # noqa: F401 - the fixture
from test_edit_safety import _can_exchange, _swappable, _swapping

from codeact.core.tool import ToolContext
from codeact.tools import search, shell

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and renameat2: POSIX")


def test_grep_and_glob_never_read_outside_while_a_folder_is_swapped_for_a_link(ctx: ToolContext,
                                                                               fixture_workspace: Path,
                                                                               tmp_path: Path) -> None:
    """Item 4 made every file idiom and ``view`` open paths part by part below the root; ``grep`` and ``glob`` still
    resolve ``path=`` to a string and hand it to ripgrep (or walk it) afterwards. A host process exchanging ``sub``
    with a link to an outside folder (renameat2, in a loop) made, in 400 rounds through the launcher, ``grep`` return
    the outside file's lines (path='sub/f.txt': 7, path='sub': 6) and ``glob`` list outside-only names (8)."""
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    sub, link = _swappable(fixture_workspace, tmp_path / "outside", {"f.txt": "inside\n"},
                           {"f.txt": "OUTSIDE-SECRET-CONTENT\n", "outside-only-name.txt": "x OUTSIDE\n"})
    calls: dict[str, Callable[[], Any]] = {
        "grep file": lambda: search.grep(ctx, pattern="OUTSIDE|inside", path="sub/f.txt"),
        "grep folder": lambda: search.grep(ctx, pattern="OUTSIDE|inside|x", path="sub"),
        "glob path=": lambda: search.glob(ctx, pattern="**", path="sub"),
        "glob pattern": lambda: search.glob(ctx, pattern="sub/*"),
    }
    assert "inside" in str(calls["grep file"]()) and "sub/f.txt" in str(calls["glob pattern"]())
    leaked: dict[str, int] = {}
    with _swapping(sub, link, "8") as swapper:
        while swapper.poll() is None:
            for name, call in calls.items():
                try:
                    got = str(call())
                except OSError:  # refused: fine, never the outside content
                    continue
                if "OUTSIDE" in got or "outside-only-name" in got:
                    leaked[name] = leaked.get(name, 0) + 1
    assert not leaked, f"outside content or names through grep/glob: {leaked}"


# ------------------------------------------------------- item 10: a deep value the program ends with
DEEP_LAST_VALUE = "x = []\nfor i in range(100000):\n    x = [x]\nx"


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_deeply_nested_last_value_is_a_clean_error_not_a_host_traceback(launcher: Launcher, warm: bool) -> None:  # noqa: F811
    """Item 10 bounded the parsers; a program may still BUILD a value 100,000 lists deep at run time (a loop, no
    deep source) and end with it. The host turns the last value into Python (``backends/monty.py`` ``_as_python``,
    recursive): RecursionError escapes as "internal error in the server: Traceback ..." (warm) or a client traceback
    (cold), and ``--json`` prints nothing on stdout."""
    done = launcher.run(DEEP_LAST_VALUE, warm=warm, args=("--json", "--timeout", "30"))
    assert "Traceback" not in done.stderr, done.stderr[-800:]
    shown = json.loads(done.stdout)
    assert shown["ok"] is False and "RecursionError" in json.dumps(shown), shown
    again = launcher.run("print(41 + 1)", warm=warm)
    assert again.returncode == 0 and "42" in again.stdout, again.stderr


@pytest.mark.slow
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_million_element_literal_is_a_clean_error_by_the_deadline(launcher: Launcher, warm: bool) -> None:  # noqa: F811
    """``x = [1, 1, ... 10**6 times]``: monty's compiler takes ~115 s and ~1.4 GB to say "SyntaxError: function too
    large" and the step is not interrupted by the run's deadline. With ``--timeout 10`` the warm server is killed
    ("does not answer, a tool holds it") and the in-process run ends in a faulthandler "Timeout ... Thread 0x..." dump;
    ``--json`` prints nothing on stdout in both."""
    code = "x = [" + ",".join(["1"] * 1_000_000) + "]\nprint(len(x))"
    before = launcher.server_pid() if warm else None
    if warm and before is None:
        launcher.run("print(1)", warm=True)
        before = launcher.server_pid()
    program = launcher.root.parent / "million.py"
    program.write_text(code)
    env = {**launcher.env, **({} if warm else {"CODEACT_SERVER": "0"})}
    done = subprocess.run([str(launcher.root / ".codeact/bin/codeact"), "run", "--json", "--timeout", "10", "--file",
                           str(program)], cwd=launcher.root, env=env, capture_output=True, text=True, timeout=200)
    assert "Traceback" not in done.stderr and "Thread 0x" not in done.stderr, done.stderr[-600:]
    shown = json.loads(done.stdout)
    assert shown["ok"] is False and shown["error"]["type"] in ("SyntaxError", "TimeoutError", "MemoryError"), shown
    if warm:
        assert launcher.server_pid() == before, "the warm server was stopped"


# ------------------------------------------------ item 7: a silent unauthenticated peer holds its slot 13 s, not 3 s
def _silent_peer(host: str, port: int) -> Any:
    """A raw WebSocket handshake, then nothing: no auth frame, and never an answer to the close frame."""
    import base64
    import socket

    sock = socket.create_connection((host, port), timeout=5)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(b"GET /providers HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    assert b" 101 " in sock.recv(1000)
    return sock


def test_a_silent_unauthenticated_peer_is_gone_by_the_auth_deadline(provider_hub: Any) -> None:  # noqa: F811
    """docs/providers.md: "its handshake and its auth frame must come within 3 s" and at most 16 may wait. The hub
    sends its error and close frame at 3 s, then waits websockets' close_timeout (10 s) for the peer's answer: a peer
    that never answers keeps its socket, thread and pending slot 13 s. 16 such peers, renewed every 13 s, lock a
    provider holding the token out 10 s in every 13 (it is closed before its handshake is read), not 0 s in 3."""
    import time
    from urllib.parse import urlsplit

    from websockets.sync.client import connect

    from codeact.providers import hub as hub_mod

    _, url = provider_hub
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    peers = [_silent_peer(where.hostname, where.port) for _ in range(hub_mod.MAX_PENDING)]
    try:
        time.sleep(hub_mod.AUTH_TIMEOUT + 2)  # every peer is past its deadline
        with connect(url, open_timeout=5, proxy=None,
                     additional_headers={"Authorization": "Bearer s3cret-token"}) as conn:
            conn.send(json.dumps({"type": "hello", "role": "provider", "name": "late", "tools": []}))
            assert json.loads(conn.recv(timeout=5))["type"] == "hello.ack"
    finally:
        for peer in peers:
            peer.close()


# ------------------------------------------- item 9: the command stops or kills its own supervisor first
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
@pytest.mark.parametrize("form", ["kill -9 $PPID", "kill -STOP $PPID"], ids=["KILL", "STOP"])
def test_a_command_that_ends_its_supervisor_leaves_nothing_running(ctx: ToolContext, form: str) -> None:
    """The supervisor (``tools/bash_reaper.py``) is bash's parent and runs as the same user: the command can SIGKILL
    or SIGSTOP it (``$PPID``). A ``setsid`` child then re-parents to init (KILL) or is never swept (STOP) and runs on
    after the call and the run, warm server and CODEACT_SERVER=0 alike (seen with ``ps``: ``sleep`` with PPID 1)."""
    import random
    import time

    marker = str(random.randrange(1_000_000, 9_000_000))
    command = f"setsid sleep {marker} >/dev/null 2>&1 </dev/null & sleep 0.2; {form}; echo started; sleep 30"
    shell.bash(ctx, command=command, timeout=3)
    time.sleep(1)
    left = _running(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"{form!r}: a setsid child outlived the call"


def _namespace_or_skip() -> None:
    from codeact.tools import bash_namespace

    if not bash_namespace.prefix({}):
        pytest.skip("no PID namespace can be made here (util-linux unshare, and root or user namespaces, are needed)")


@pytest.mark.parametrize("escape", ["env -i setsid sleep {n}", "env -u CODEACT_BASH_CALL setsid sleep {n}",
                                    "setsid env -i sh -c 'sleep {n} & sleep {n}'"])
@pytest.mark.parametrize("form", ["kill -9 $PPID", "kill -STOP $PPID"], ids=["KILL", "STOP"])
def test_a_command_that_ends_its_supervisor_and_drops_the_mark_leaves_nothing_running(
        ctx: ToolContext, form: str, escape: str) -> None:
    """The red team's escape from the mark-based sweep: kill (or stop) the supervisor, then start a process whose
    environment no longer carries the call's mark. It ran on after the run; in the call's PID namespace the
    supervisor cannot be signalled from inside and whatever is left dies with it."""
    import random
    import time

    _namespace_or_skip()
    marker = str(random.randrange(1_000_000, 9_000_000))
    command = (f"{form}; ({escape.format(n=marker)}) >/dev/null 2>&1 </dev/null & sleep 0.3; "
               "echo started; ps -e -o pid= | wc -l")
    result = shell.bash(ctx, command=command, timeout=10)
    time.sleep(0.5)
    left = _running(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"{form!r} + {escape!r} outlived the call"
    assert result["stdout"].startswith("started\n"), result
    assert int(result["stdout"].split()[1]) < 10, "the command saw processes outside its namespace"


def test_a_signal_that_ends_bash_is_reported_as_a_shell_does(ctx: ToolContext) -> None:
    """bash killed by a signal: 128 + N, as a shell reports it, namespace or not."""
    assert shell.bash(ctx, command="kill -9 $$")["exit_code"] == 128 + 9


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor is Linux's")
@pytest.mark.parametrize("sig", [9, 15])
def test_the_supervisor_reports_a_signal_one_way_namespace_or_not(sig: int) -> None:
    """The supervisor exits 128 + N for a bash a signal ended, whether it is a namespace's init or not (it used
    to raise the signal on itself outside a namespace, leaving tools/shell.py to turn -N into 128 + N)."""
    reaper = Path(shell.__file__).with_name("bash_reaper.py")
    done = subprocess.run([sys.executable, "-S", "-I", str(reaper), f"kill -{sig} $$"], capture_output=True,
                          timeout=60)
    assert done.returncode == 128 + sig, done


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_a_bash_call_ending_leaves_concurrent_calls_and_session_leaders_alone(ctx: ToolContext) -> None:
    """The warm server runs several calls at once, and the MCP SDK starts servers in sessions of their own. A call
    that ends sweeps only its own command's processes: a longer call that began during it still answers (it lost
    its supervisor and printed nothing), and a session leader this process started during it lives on."""
    import threading
    import time

    answers: dict[str, dict[str, Any]] = {}
    short = threading.Thread(target=lambda: answers.update(short=shell.bash(ctx, command="sleep 0.6")))
    short.start()
    time.sleep(0.15)
    own = subprocess.Popen(["sleep", "30"], start_new_session=True)  # as the MCP SDK starts a stdio server
    try:
        answers["long"] = shell.bash(ctx, command="sleep 1.2; echo finished")
        short.join()
        assert answers["short"]["exit_code"] == 0
        assert answers["long"] == {"stdout": "finished\n", "stderr": "", "exit_code": 0}
        assert own.poll() is None, "a session leader this process started was killed by a bash call's sweep"
    finally:
        own.kill()
        own.wait()
