"""Red team, round 5 (issue 40): each test is one attempt that broke through, run as the attacker ran it, and the
ordinary use next to it that must keep working."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from test_attacks_round4 import Launcher, launcher  # noqa: F401 - the fixture
from test_edit_safety import _can_exchange, _swappable, _swapping
from test_tool_bounds import MARGIN, assert_bounded, config, measured_run, trickle, workspace  # noqa: F401 - fixtures

from codeact.backends.sandbox_os import WorkspaceOS
from codeact.core.boundary import Workspace
from codeact.core.tool import ToolContext
from codeact.tools import shell

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, descriptors and processes: POSIX")


# ------------------------------------------------------------------ item 4: the file idioms under a swapped folder
def _idioms(files: WorkspaceOS, root: Path) -> dict[str, Callable[[], Any]]:
    """Every file idiom of the sandbox on ``sub`` (a folder a host process swaps for a link to outside)."""
    f, sub = PurePosixPath(root / "sub/f.txt"), PurePosixPath(root / "sub")
    return {
        "read_text": lambda: files.answer("Path.read_text", (f,), {}),
        "read_bytes": lambda: files.answer("Path.read_bytes", (f,), {}).decode(),
        "iterdir": lambda: " ".join(p.name for p in files.answer("Path.iterdir", (sub,), {})),
        "scan": lambda: " ".join(e.path for e in files.answer("Path.scan", (sub,), {})),
        "stat": lambda: str(files.answer("Path.stat", (f,), {}).st_size),
        "is_symlink": lambda: str(files.answer("Path.is_symlink", (PurePosixPath(root / "sub/f.txt"),), {})),
    }


def test_the_file_idioms_never_read_outside_while_a_folder_is_swapped_for_a_link(fixture_workspace: Path,
                                                                                  tmp_path: Path) -> None:
    """The idioms resolved a path, then opened the resolved string: with ``sub`` swapped for a link to outside
    meanwhile, 8 to 304 of 4,000 reads returned the outside file. Each now opens the path part by part below the
    root, no link followed, as ``view`` does: the outside file, name or size is never seen."""
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    sub, link = _swappable(fixture_workspace, tmp_path / "outside", {"f.txt": "inside\n"},
                           {"f.txt": "OUTSIDE-SECRET-CONTENT\n", "outside-only-name": ""})
    files = WorkspaceOS(Workspace.at(fixture_workspace))
    idioms = _idioms(files, fixture_workspace)
    assert idioms["read_text"]() == "inside\n" and idioms["iterdir"]() == "f.txt"
    leaked: dict[str, int] = {}
    read: dict[str, int] = {}
    with _swapping(sub, link, "4") as swapper:
        while swapper.poll() is None:
            for name, call in idioms.items():
                try:
                    got = call()
                except OSError:  # refused, or "changed while it was opened": never the outside content
                    continue
                read[name] = read.get(name, 0) + 1
                if "OUTSIDE" in got or "outside-only-name" in got or got == str(len("OUTSIDE-SECRET-CONTENT\n")):
                    leaked[name] = leaked.get(name, 0) + 1
    assert not leaked, f"outside content through the idioms: {leaked} (of {read})"
    assert all(read.get(name) for name in ("read_text", "iterdir", "scan")), read  # they did run meanwhile


# ------------------------------------------- also found: a refused workspace starts no server; stop reaches any
def _servers_for(folder: Path) -> list[int]:
    """The pids of warm servers serving ``folder`` (their command line names it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--workspace" in argv and os.fsencode(folder) in argv and any(b"server.daemon" in a for a in argv):
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("where", ["home", ".git"])
def test_a_refused_workspace_starts_no_warm_server_and_server_stop_is_never_refused(
        launcher: Launcher, tmp_path: Path, where: str) -> None:  # noqa: F811
    """``--workspace $HOME`` (or ``.git``) was refused, but the thin client had started a warm server for it first,
    which lingered for its idle time, and ``server stop --workspace $HOME`` refused to stop it."""
    home = tmp_path / "home"
    home.mkdir()
    target = home if where == "home" else launcher.root / ".git"
    env = {**launcher.env, "HOME": str(home)}
    codeact = str(launcher.root / ".codeact/bin/codeact")
    done = subprocess.run([codeact, "run", "--workspace", str(target), "--code", "print(1)"], cwd=launcher.root,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is refused" in done.stderr, (done.returncode, done.stderr)
    assert _servers_for(target) == [], "a warm server was started for a refused workspace"
    for action in ("status", "stop"):
        shown = subprocess.run([codeact, "server", action, "--workspace", str(target)], cwd=launcher.root, env=env,
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode in (0, 1) and "no server runs" in shown.stderr, (action, shown.stderr)
    start = subprocess.run([codeact, "server", "start", "--workspace", str(target)], cwd=launcher.root, env=env,
                           capture_output=True, text=True, timeout=60)
    assert start.returncode == 2 and "is refused" in start.stderr, start.stderr
    assert _servers_for(target) == []


# ------------------------------------------------------------- item 10: a program nested deeper than any parser
@pytest.mark.parametrize("depth", [1_000, 3_000, 60_000])
def test_a_deeply_nested_program_gets_a_clean_error_and_valid_json(tmp_path: Path, fixture_workspace: Path,
                                                                  user_config: Path, depth: int) -> None:
    """``not not ... True`` 100,000 deep ended with a host traceback (MemoryError in the host's ``ast.parse``;
    RecursionError at 1,000 and 3,000) and no JSON with ``--json``: it is a SyntaxError, as the sandbox's parser
    gives one past its own depth. (60,000 deep: 100,000 is past the size cap, refused before any parse.)"""
    from tests.runtime.conftest import base_environ

    program = tmp_path / "deep.py"
    program.write_text("x = " + "not " * depth + "True\nprint(x)\n")
    env = base_environ(user_config, CODEACT_SERVER="0", CODEACT_BACKEND="monty",
                       PYTHONPATH=str(Path(__file__).resolve().parents[2] / "runtime"))
    done = subprocess.run([sys.executable, "-m", "codeact", "run", "--json", "--workspace", str(fixture_workspace),
                           "--file", str(program)], env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    shown = json.loads(done.stdout)
    assert shown["ok"] is False and shown["error"]["type"] == "SyntaxError", shown["error"]
    assert "too deeply nested" in shown["error"]["message"], shown["error"]


@pytest.mark.slow
def test_a_deeply_nested_program_through_the_warm_server(launcher: Launcher, tmp_path: Path) -> None:  # noqa: F811
    program = tmp_path / "deep.py"
    program.write_text("not " * 60_000 + "True\n")  # within the size cap (codeact.cmdline.MAX_PROGRAM)
    for warm in (True, False):
        env = {**launcher.env, **({} if warm else {"CODEACT_SERVER": "0"})}
        done = subprocess.run([str(launcher.root / ".codeact/bin/codeact"), "run", "--json", "--file", str(program)],
                              cwd=launcher.root, env=env, capture_output=True, text=True, timeout=120)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
        shown = json.loads(done.stdout)
        assert shown["error"]["type"] == "SyntaxError" and "too deeply nested" in shown["error"]["message"]
    again = launcher.run("print(6 * 7)", warm=True)
    assert again.returncode == 0 and again.stdout == "42\n", again.stderr


# ------------------------------------------------------------------- item 8: github_api's reads end by the deadline
@pytest.mark.parametrize("route", ["/page", "/headers"])
def test_github_api_of_a_trickling_reply_ends_by_the_deadline(workspace: Path, config: Path,  # noqa: F811
                                                            trickle: str, route: str) -> None:  # noqa: F811
    """One ``read(65536)`` kept going on a body arriving a byte at a time, past the deadline (each byte came within
    the socket's timeout): the program never got its TimeoutError. Every socket of the call is now shut at the
    run's deadline, as web_fetch's are."""
    run = measured_run(f'github_api(endpoint="{route}")', workspace, config, timeout=3,
                       env={"CODEACT_TOOLS": "github_api", "GITHUB_API_URL": trickle, "GH_TOKEN": "t0ken"})
    assert not run.data["ok"], run.data
    assert run.data["error"]["type"] == "TimeoutError", run.data
    assert run.data["error"]["message"].startswith(f"github_api() was stopped at the run's deadline while GET "
                                                   f"{route}"), run.data["error"]
    # the run's own clock (a loaded machine adds seconds to the process's start and exit, not to the run)
    assert run.data["duration_ms"] < (3 + MARGIN) * 1000, run.data["duration_ms"]
    assert_bounded(run, 3 + 10)


# ----------------------------------------------- item 9: nothing a bash call started outlives it, setsid included
def _running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (a sleep of an unusual length)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
@pytest.mark.parametrize("form", ["setsid sleep {n} &", "(setsid sleep {n} &);", "env -i setsid sleep {n} &",
                                  "setsid sh -c 'sleep {n} & sleep {n}' &", "nohup setsid sleep {n} >/dev/null 2>&1 &"])
@pytest.mark.parametrize("timeout", [None, 1.0], ids=["returns", "times-out"])
def test_a_process_that_leaves_the_group_does_not_outlive_the_bash_call(ctx: ToolContext, form: str,
                                                                       timeout: float | None) -> None:
    """``setsid`` puts a child in a session of its own: killing bash's process group missed it, and it ran on after
    the run (docs/security.md said bash's children die with its group)."""
    import random

    marker = str(random.randrange(1_000_000, 9_000_000))  # sleep's argument: unique to this test
    command = form.format(n=marker) + " echo started" + ("; sleep 30" if timeout else "")
    result = shell.bash(ctx, command=command, **({"timeout": timeout} if timeout else {}))
    assert result["stdout"] == "started\n", result
    assert result["exit_code"] == (shell.TIMEOUT_EXIT_CODE if timeout else 0), result
    left = _running(marker)
    for pid in left:
        os.kill(pid, 9)
    assert left == [], f"{form!r} outlived the call"


# ---------------------------------------------- item 7: unauthenticated peers of the live-provider hub are bounded
@pytest.fixture
def provider_hub() -> Any:
    pytest.importorskip("websockets", reason="websockets is not installed (template requirements.txt pins it)")
    from codeact.providers.hub import ProviderHub

    hub = ProviderHub(token="s3cret-token", reserved=lambda: (), max_result=1000)
    url = hub.start()
    yield hub, url
    hub.stop()


def test_the_hub_reads_no_large_frame_before_authentication(provider_hub: Any) -> None:
    """A token-less peer's first frame was read up to 4 MiB: 60 of them grew the server by 550 MB."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from codeact.providers import hub as hub_mod

    _, url = provider_hub
    with connect(url, open_timeout=5, proxy=None, max_size=None) as conn:
        conn.send("x" * 60_000)  # within what an authenticated provider may send (its results), not before
        with pytest.raises(ConnectionClosed) as closed:
            conn.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # message too big, before auth
    assert hub_mod.PRE_AUTH_MAX_SIZE <= 1 << 14
    with connect(url, open_timeout=5, proxy=None, additional_headers={"Authorization": "Bearer s3cret-token"}) as conn:
        conn.send(json.dumps({"type": "hello", "role": "provider", "name": "big", "tools": []}))
        assert json.loads(conn.recv(timeout=5))["type"] == "hello.ack"
        conn.send("x" * 3000)  # larger than the pre-auth limit: an authenticated peer may send it
        assert json.loads(conn.recv(timeout=5))["type"] == "error"


def test_the_hub_caps_pending_connections_and_ends_them_at_a_short_deadline(provider_hub: Any) -> None:
    """Any number of token-less connections were accepted and each held a thread (8 -> 188 threads, for good)."""
    import socket
    import threading
    import time
    from urllib.parse import urlsplit

    from websockets.sync.client import connect

    from codeact.providers import hub as hub_mod

    _, url = provider_hub
    where = urlsplit(url)
    before = threading.active_count()
    idle = [socket.create_connection((where.hostname, where.port)) for _ in range(40)]  # no handshake at all
    quiet = []
    for _ in range(20):  # a handshake, then no auth frame
        try:
            quiet.append(connect(url, open_timeout=5, proxy=None))
        except Exception:  # noqa: BLE001 - refused once the cap is reached
            pass
    time.sleep(0.5)
    grown = threading.active_count() - before
    assert grown <= 2 * hub_mod.MAX_PENDING + 2, f"{grown} threads for 60 unauthenticated peers"
    assert hub_mod.AUTH_TIMEOUT <= 5
    until = time.monotonic() + hub_mod.AUTH_TIMEOUT + 10  # a loaded machine: their threads end soon after it
    while threading.active_count() - before > 2 and time.monotonic() < until:
        time.sleep(0.1)
    assert threading.active_count() - before <= 2, "unauthenticated peers outlived the auth deadline"
    for sock in idle:
        sock.close()
    for conn in quiet:
        conn.close()
    with connect(url, open_timeout=5, proxy=None, additional_headers={"Authorization": "Bearer s3cret-token"}) as conn:
        conn.send(json.dumps({"type": "hello", "role": "provider", "name": "after", "tools": []}))
        assert json.loads(conn.recv(timeout=5))["type"] == "hello.ack"


# ------------------------------------------------ item 5: a huge last value or session state is never encoded whole
HUGE = 's = "x" * 100_000\nbig = [[[s] * 100] * 100] * 100\n'  # 100 GB as JSON, a few MB in the sandbox


def _two_gib() -> None:
    """The child's address space capped (a shared machine: the old code grew without bound)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _peak_mib(proc: subprocess.Popen[str]) -> tuple[str, str, float]:
    import time

    peak = 0.0
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
        except OSError:
            pass
        time.sleep(0.02)
    out, err = proc.communicate()
    return out, err, peak


@pytest.mark.parametrize("form", ["value", "json", "session"])
def test_a_huge_value_is_encoded_within_a_budget(tmp_path: Path, fixture_workspace: Path, user_config: Path,
                                                form: str) -> None:
    """The run's last value was JSON-encoded whole before the 16 KiB cut: ``[[[s]*100]*100]*100`` drove the
    warm server to 2.4 GB. It is encoded up to the cut, and the cut is said."""
    from tests.runtime.conftest import base_environ

    code = HUGE + ("big" if form in ("value", "json") else "print(len(big))")
    args = ["--json"] if form == "json" else ["--session", "huge"] if form == "session" else []
    env = base_environ(user_config, CODEACT_SERVER="0", CODEACT_BACKEND="monty",
                       PYTHONPATH=str(Path(__file__).resolve().parents[2] / "runtime"),
                       XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "codeact", "run", *args, "--timeout", "60", "--workspace",
                             str(fixture_workspace), "--code", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_two_gib)
    out, err, peak = _peak_mib(proc)
    assert "Traceback" not in err, err[-2000:]
    assert peak < 1024, f"the host grew to {peak:.0f} MiB"
    if form == "json":
        shown = json.loads(out)
        assert shown["result"] is None and shown["cut"] is not None, shown
    elif form == "value":
        assert proc.returncode == 0 and out.startswith('[[["xxxx'), (out[:200], err[-500:])
        assert "[cut:" in out + err
    elif form == "session":  # s (100 kB) is kept, big is not
        assert proc.returncode == 0, err[-500:]
        assert "session 'huge': not kept" in err and "big" in err, err[-500:]
        assert err.split("not kept", 1)[1].split("MiB):", 1)[1].split()[0] == "big", err[-500:]
