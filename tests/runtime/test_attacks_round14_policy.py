"""Red team, round 14 (a helper that had not seen the changes): issue 40's items 1, 5, 7, 8, 9 and the write
budget re-attacked through the stamped launcher, the real bash, git and the hooks. Each test is one attempt that
broke through; the round's report lists what held."""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_attacks_round6_bash import _processes_named  # argv[0] is the name: exec -a NAME

from tests.runtime.launchers import Launcher


# ------------------------------------------------- item 8: web_fetch's work after the read is not bounded by the time
class _BracketPage(BaseHTTPRequestHandler):
    """An HTML page of 180 KB: ``[](`` again and again, no ``)``. It arrives at once."""

    BODY = b"<html><body><p>" + b"[](" * 60_000 + b"</p></body></html>"
    ATTRS = b"<html><body>" + b"<a b='" * 20_000  # html.parser itself (CPython 3.11.7): 74 s for these 120 KB

    def do_GET(self) -> None:
        try:
            body = self.ATTRS if self.path.endswith("/attrs") else self.BODY
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def bracket_page() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _BracketPage)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/page"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow
@pytest.mark.parametrize("page", ["page", "attrs"])
def test_web_fetch_of_a_hostile_html_page_ends_by_the_deadline(tmp_path: Path, bracket_page: str, page: str) -> None:
    """Breach (limits, item 8's neighbour): web_fetch bounds the READ by the time left (the watchdog shuts the
    socket), but what it does with the body afterwards is not: ``html_to_text`` ends with
    ``re.sub(r"\\[\\s*\\]\\([^)]*\\)", "", body)``, which is quadratic on text holding ``[](`` many times and no
    ``)`` (each ``[`` scans to the end of the text). Any web page can hold that text: 180 KB of it keeps the run
    going about 10 s past a 3 s ``--timeout``, 10 MiB (MAX_BODY) for hours, holding the GIL. Only the last-resort
    watchdogs end it: in process (``python -m codeact run``, ``CODEACT_SERVER=0``) faulthandler kills the process
    at 4.8 s with ``Timeout (0:00:04.800000)!`` and every thread's host stack on stderr, and ``--json`` prints
    nothing at all; through the warm server the client kills the whole server ("does not answer, a tool holds it").
    The program never gets the TimeoutError web_fetch promises ("The fetch ends by the run's deadline"), and the
    page, not the program, chooses this: any site the model reads (a prompt injection) can end the run so.

    CPython's own ``html.parser`` (3.11.7 here) is quadratic too on malformed input a page chooses: 80 KB of
    ``<!--`` took 8 s to convert, 120 KB of ``<a b='`` 69 s (the ``attrs`` case, open). The fix of 23cbcb9 (feed
    64 KiB at a time, the deadline checked before each) does not bound it: the parser buffers an unclosed tag and
    converts it in ``reader.close()``, after the last check — the checks came at 0.00, 0.00 and 0.03 s, then
    ``close()`` ran 74 s (and a single 64 KiB feed of such text can take ~30 s on its own). Bound the parser
    itself: run the conversion where it can be stopped (a worker process killed at the deadline), or refuse a
    tag/comment left open past a size (``rawdata`` growing without progress) before ``close()``.

    Checked with a real HTTP server on loopback (allow_hosts) and the real runtime (``python -m codeact run``), and
    through the stamped launcher (next test).
    Fix: make the pattern linear (``\\[\\s*\\]\\([^)\\s]*\\)`` still scans; better a hand loop, or drop empty
    links while the parser writes them: ``handle_endtag('a')`` knows the link had no text), and run the page's
    conversion with the deadline checked (or in the bounded worker the other host helpers use).
    """
    from tests.runtime.test_tool_bounds import measured_run

    config = tmp_path / "userconfig"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"allow_hosts": ["127.0.0.1"]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# demo\n")
    url = bracket_page.rsplit("/", 1)[0] + "/" + page
    run = measured_run(f'len(web_fetch(url="{url}"))', workspace.resolve(), config, timeout=3,
                       env={"CODEACT_TOOLS": "web_fetch"})
    # the page's text, or web_fetch's TimeoutError: either way by the deadline (the conversion is linear now, so
    # this page's text comes back at once)
    assert run.data.get("ok") or (run.data.get("error") or {}).get("type") == "TimeoutError", (run.data,
                                                                                               run.stderr[:300])
    assert run.seconds < 3 + 2.0, f"ran {run.seconds:.1f} s under a 3 s limit: {run.data}"


@pytest.mark.slow
def test_web_fetch_of_a_hostile_html_page_in_the_warm_server_ends_with_the_deadline(
        make_launcher: Callable[..., Launcher], bracket_page: str) -> None:
    """The same page through the stamped launcher and its warm server (seen: the hostile run ends at 5 s with "the
    server does not answer, a tool holds it; it was stopped", the server's process group killed). The hostile run
    must end by its 3 s limit with web_fetch's TimeoutError. An innocent run of the same workspace, started a second
    later with its own ``--timeout 30`` and a 6 s ``sleep`` in ``bash``, must end normally (it did here: HELD)."""
    launcher = make_launcher(["view", "web_fetch", "bash"], limit=3)
    config = Path(launcher.env["CODEACT_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps({"allow_hosts": ["127.0.0.1"]}))
    assert launcher.run("print(1)").returncode == 0  # the warm server is up
    results: dict[str, Any] = {}

    def run(name: str, code: str, delay: float, limit: int) -> None:
        time.sleep(delay)
        results[name] = launcher.run(code, timeout=200, limit=limit)

    threads = [threading.Thread(target=run, args=("hostile", f'len(web_fetch(url="{bracket_page}"))', 0.0, 3)),
               threading.Thread(target=run, args=("innocent", 'print(bash(command="sleep 6; echo fine"))', 1.0, 30))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    innocent = results["innocent"]
    assert innocent.returncode == 0 and "fine" in innocent.stdout, f"the innocent run was harmed: {innocent}"
    hostile = results["hostile"]  # the page's text, or web_fetch's TimeoutError, not a killed server
    assert hostile.returncode == 0 or "TimeoutError" in hostile.stdout + hostile.stderr, hostile


# --------------------------------------------- item 1: the user's hook and any "path" of the user's settings.json
GLOBAL_ENTRY = ('[ ! -f "${COPILOT_HOOK_DIR}/../codeact/hooks/pre-tool-use.sh" ] || '
                '. "${COPILOT_HOOK_DIR}/../codeact/hooks/pre-tool-use.sh"')


def _stamp(template_src: Path, dest: Path, **answers: Any) -> Path:
    from copier import run_copy

    from tests.conftest import make_repo

    project = make_repo(dest)
    run_copy(str(template_src), project, data=answers, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
             skip_tasks=True, overwrite=True)
    return project


def _hook(cwd: Path, entry: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    import subprocess

    done = subprocess.run(["/bin/bash", "--norc", "--noprofile", "-c", entry], cwd=cwd, env=env, timeout=30,
                          input=json.dumps(payload).encode(), capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()  # "" allows; a deny decision otherwise


@pytest.mark.slow
def test_the_users_hook_does_not_pass_a_launcher_of_a_marketplace_whose_codeact_is_not_enabled(
        template_src: Path, tmp_path: Path) -> None:
    """Breach (item 1, a repository's file widening the user's policy): installs.sh.in's ``find_installs`` counts a
    plugin install when ``"codeact@<any marketplace>": true`` appears in ``$COPILOT_HOME/settings.json`` and then
    takes EVERY ``"path": "..."`` of that file as a live local marketplace: ``<path>/plugins/codeact`` with a
    ``plugin.json`` and a marked ``bin/codeact`` is "an enabled codeact plugin". The path is never tied to the
    marketplace whose codeact the user enabled. A user with CodeAct's plugin enabled from their organisation's
    marketplace (here a local one, ``acme``) who also added a cloned repository as a marketplace to look at its
    plugins (``extraKnownMarketplaces.other.source.path``; nothing of it installed or enabled) has their global
    hook, in exclusive mode, pass that clone's ``plugins/codeact/bin/codeact`` — any script with the launcher's
    mark on its second line and a ``plugin.json`` beside it — so the model's shell call runs it on the host.

    Checked with the stamped global install's real pre-tool-use.sh run as the CLI runs it (bash -c with the
    registered entry, the CLI's payload), as tests/hook/test_hook_coexist.py drives it. Fix: read settings.json
    as JSON (a small reader, or only the shapes the CLI writes), take ``enabledPlugins`` keys ``codeact@M`` that
    are true, and for each only ``extraKnownMarketplaces.M.source.path`` (and the installed copy of M's plugin);
    never a ``"path"`` found elsewhere. Test: an enabled codeact@acme beside a marketplace ``other`` whose
    plugins/codeact is not enabled: other's launcher is denied, acme's passes.
    """
    from codeact.enforcement import spec
    from codeact.lifecycle import links

    global_dir = _stamp(template_src, tmp_path / "global", scope="global", enforcement="exclusive")
    market = _stamp(template_src, tmp_path / "acme", scope="plugin", plugin_owner="Acme", enforcement="exclusive")
    home = tmp_path / "copilot-home"
    home.mkdir()
    changed, warnings = links.link(global_dir, home)
    assert changed and not warnings, warnings
    hostile = tmp_path / "clone"
    (hostile / "plugins/codeact/bin").mkdir(parents=True)
    (hostile / "plugins/codeact/plugin.json").write_text('{"name": "codeact"}\n')
    marker = tmp_path / "pwned"
    (hostile / "plugins/codeact/bin/codeact").write_text(f"#!/bin/sh\n{spec.LAUNCHER_MARK} v9)\ntouch {marker}\n")
    settings = {"extraKnownMarketplaces": {
        "acme": {"source": {"source": "directory", "path": str(market)}},
        "other": {"source": {"source": "directory", "path": str(hostile)}}},
        "enabledPlugins": {"codeact@acme": True}}
    (home / "settings.json").write_text(json.dumps(settings, indent=2))
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    state = tmp_path / "run"
    state.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEACT_")}
    env.update(XDG_RUNTIME_DIR=str(state), TMPDIR=str(state), HOME=str(home), COPILOT_HOME=str(home),
               COPILOT_HOOK_DIR=str(home / "hooks"), COPILOT_PROJECT_DIR=str(work))

    def call(command: str) -> dict[str, Any]:
        return {"sessionId": "s-1", "timestamp": 1, "cwd": str(work), "toolName": "bash",
                "toolArgs": {"command": command, "description": "run it"}}

    enabled = market / "plugins/codeact/bin/codeact"
    assert _hook(work, GLOBAL_ENTRY, call(f"{enabled} run --code 'print(1)'"), env) == ""  # the user's plugin
    assert _hook(work, GLOBAL_ENTRY, call("ls"), env) != ""  # exclusive mode is on
    out = _hook(work, GLOBAL_ENTRY, call(f"{hostile}/plugins/codeact/bin/codeact run --code 'print(1)'"), env)
    assert out != "", "the user's global hook passed the launcher of a marketplace whose codeact is not enabled"


# ------------------------------------------ item 5: --session state checked by an exponential walk, not a budget
@pytest.mark.slow
def test_session_state_of_shared_references_is_checked_within_the_run(tmp_path: Path) -> None:
    """Breach (item 5/6, limits): ``sessions.plain`` checks each global with ``_not_plain`` (and ``_holds_tuple``),
    which recurse into every item with no budget and no memo. A program builds ``a = [a, a]`` 30 times: 31 small
    lists in the sandbox (the value crosses to the host with its sharing: 30 MB RSS), 2**30 paths for the walk,
    which stays under MAX_DEPTH (50), so it never stops early. The run's own code took milliseconds; the host then
    spins until the last-resort watchdogs: in process faulthandler ends it at 6.8 s (``--timeout 5``) with every
    thread's host stack on stderr and no ``--json`` envelope at all; through the warm server (seen with the stamped
    launcher) the run is "abandoned and the server restarts" at 4.5 s of a 3 s limit. ``save``'s ``within`` has a
    budget, the check before it has none; ``[a, a]`` 45 times would run for days were nothing to kill it.

    Checked with the real runtime (``python -m codeact run --json --timeout 5 --session s``, monty backend).
    Fix: walk with a budget counted in visits (stop at MAX_STATE_BYTES' worth of items, or reuse ``within``'s count:
    what cannot be encoded within 8 MiB is not kept anyway) and with the run's deadline checked; or encode first
    (``within`` stops at the budget) and check plainness on the decoded text, which is a tree of bounded size.
    """
    from tests.runtime.test_tool_bounds import measured_run

    config = tmp_path / "userconfig"
    config.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# demo\n")
    code = "a = [0]\nfor i in range(30):\n    a = [a, a]\nb = 1"
    run = measured_run(code, workspace.resolve(), config, timeout=5, args=("--session", "s1"))
    assert "ok" in run.data and "unparsed" not in run.data, (run.data, run.stderr[:400])
    assert run.seconds < 5 + 2.0, f"ran {run.seconds:.1f} s under a 5 s limit"


# --------------------------------------------------------- the per-run write budget: folders and names are free
def _disk_bytes(root: Path) -> int:
    """What ``root`` takes on disk (blocks of files and folders, as du counts them)."""
    total = 0
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files, "."]:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total


@pytest.mark.slow
def test_the_write_limit_counts_the_folders_create_makes(tmp_path: Path) -> None:
    """Breach (the per-run write budget of issue 40's extra paragraph): ``_charge_write`` counts ``len(data)`` only,
    but ``create`` makes every missing parent folder (``atomic.slot(..., make_parents=True)``), each at least one
    block on disk, and names cost directory blocks too. With ``CODEACT_WRITES=1048576`` (1 MiB) a run of 300
    ``create`` calls, each an empty file 30 new folders deep, left 70 MiB on disk here (ext4-like blocks of
    folders) and is never refused; with the default 128 MiB limit and the 10,000-call cap the same loop writes
    some 2 GB in about a minute (the
    round-5 finding "one run filled a 64 MB disk in 2.2 s" is open again, through folders).

    Checked with the real runtime (``python -m codeact run``, monty backend) and the disk's own block counts.
    Fix: charge each folder create() or edit() makes (a block, e.g. 4 KiB, per folder) and each new name (its
    length plus a directory entry's overhead) against the same budget; or cap the folders one run may create, said
    in a note when hit.
    """
    from tests.runtime.test_tool_bounds import measured_run

    config = tmp_path / "userconfig"
    config.mkdir()
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (workspace / "README.md").write_text("# demo\n")
    before = _disk_bytes(workspace)
    code = ('for i in range(300):\n'
            '    create(path="/".join(f"d{i}x{j}" for j in range(30)) + "/f", file_text="")\n'
            '"done"')
    run = measured_run(code, workspace, config, timeout=120, env={"CODEACT_WRITES": str(1 << 20)})
    assert run.data.get("ok") is not None, (run.data, run.stderr[:300])
    grown = _disk_bytes(workspace) - before
    assert grown <= 2 * (1 << 20), f"the run took {grown / (1 << 20):.1f} MiB of disk under a 1 MiB write limit"


# ------------------------------------------------------------ item 8: a name whose DNS server never answers
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0 or not Path("/usr/bin/unshare").exists(),
                    reason="a resolv.conf of its own for one process tree: a mount namespace, as root")
def test_web_fetch_of_a_host_whose_dns_never_answers_ends_by_the_deadline(tmp_path: Path) -> None:
    """Breach (item 8): web_fetch bounds the connect and every read by the time left (the watchdog shuts its
    sockets), but ``resolve_checked`` first calls ``socket.getaddrinfo`` on the program's host name, which no socket
    of the watchdog's covers: it waits as long as the resolver does (glibc: ``timeout`` x ``attempts`` x servers,
    5 s x 2 by default, 30 s x 5 at most). Anyone who runs a name server can make a name of theirs never answer;
    a prompt injection has the model fetch it. Here a resolv.conf for the run's process tree alone (a mount
    namespace) names a local UDP server that reads queries and never replies, with ``options timeout:5 attempts:2``:
    the run with ``--timeout 3`` ends only when faulthandler kills it (host stacks, no ``--json`` envelope) instead
    of with web_fetch's TimeoutError.

    Checked with the real runtime (``python -m codeact run --json --timeout 3``) and glibc's resolver.
    Fix: resolve in a daemon thread (or with ``getaddrinfo_a``) and wait for it at most the time left, raising the
    deadline's TimeoutError; the same for github_api's ``socket.create_connection`` (and the proxy's name).
    """
    import socket
    import subprocess

    runtime = Path(__file__).resolve().parents[2] / "runtime"
    quiet = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    quiet.bind(("127.0.0.77", 53))  # reads nothing back: every query waits for the resolver's timeout
    try:
        resolv = tmp_path / "resolv.conf"
        resolv.write_text("nameserver 127.0.0.77\noptions timeout:5 attempts:2\n")
        config = tmp_path / "userconfig"
        config.mkdir()
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "README.md").write_text("# demo\n")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8",
               "PYTHONPATH": str(runtime), "CODEACT_CONFIG_DIR": str(config), "CODEACT_BACKEND": "monty",
               "CODEACT_TOOLS": "web_fetch"}
        inner = (f"mount --bind {resolv} /etc/resolv.conf && exec {sys.executable} -m codeact run --json "
                 "--timeout 3 --code 'web_fetch(url=\"http://never-answers.example.invalid/\")'")
        started = time.monotonic()
        done = subprocess.run(["/usr/bin/unshare", "--mount", "--propagation", "private", "sh", "-c", inner],
                              cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
        seconds = time.monotonic() - started
    finally:
        quiet.close()
    assert done.stdout.strip().startswith("{"), f"no --json envelope after {seconds:.1f} s: {done.stderr[:300]}"
    data = json.loads(done.stdout)
    assert data["error"]["type"] == "TimeoutError" and seconds < 3 + 5.0, (seconds, data["error"])  # resolver: 10 s


# ------------------------------------------- item 7: a refused handshake holds its pre-auth slot for as long as it likes
def test_refused_handshakes_do_not_hold_the_hubs_pending_slots() -> None:
    """Breach (item 7, pre-auth limits): the hub counts a connection as pending from ``Connection.__init__`` until
    ``close_socket()``. A peer that sends an upgrade request the hub refuses in ``_check_request`` (a wrong path,
    here ``/nope``; a foreign ``Origin``; a token in the URL) gets its HTTP answer, and then websockets' own
    ``conn_handler`` fails its ``assert connection.protocol.state is OPEN`` and only ``sock.close()``\\ s the socket:
    the connection's receiving thread stays blocked in ``recv`` (a closed descriptor does not wake it on Linux), so
    ``close_socket()`` never runs and the slot is never freed while the peer holds its end open. Sixteen idle TCP
    connections from any local user (no token needed) fill MAX_PENDING past AUTH_TIMEOUT (3 s) for as long as they
    stay open: a provider with the right token is refused ("did not receive a valid HTTP response"), and 32 threads
    stay blocked. Closing the attacker's sockets frees the slots (seen: 0 pending after).

    Checked with the real ProviderHub and websockets 16.1 on loopback. Fix: free the slot when the handshake
    ends without OPEN (``process_request`` returning a response marks the connection done: drop it from
    ``_pending`` there, and shut the socket down with ``socket.shutdown(SHUT_RDWR)`` so the receiving thread
    wakes), or give the whole pre-auth phase one deadline enforced by the hub (a timer that shuts the socket).
    """
    import socket

    from websockets.sync.client import connect

    from codeact.providers.hub import AUTH_TIMEOUT, MAX_PENDING, ProviderHub

    hub = ProviderHub(token="secret-token", reserved=lambda: [])
    url = hub.start()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    request = (b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    idle = []
    try:
        for _ in range(MAX_PENDING):
            peer = socket.create_connection(("127.0.0.1", port))
            peer.sendall(request)
            idle.append(peer)
        time.sleep(2 * AUTH_TIMEOUT)  # the pre-auth deadline has passed for every one of them
        try:
            with connect(url, additional_headers={"Authorization": "Bearer secret-token"}, open_timeout=3) as ws:
                ws.send(json.dumps({"type": "hello", "name": "lender", "tools": []}))
                answer = ws.recv(timeout=3)
        except Exception as exc:  # noqa: BLE001 - what the provider sees is the finding
            answer = f"refused: {type(exc).__name__}: {exc}"
        assert "hello.ack" in str(answer), f"a provider with the token, after {MAX_PENDING} refused idle peers: {answer}"
    finally:
        for peer in idle:
            peer.close()
        hub.stop()


# ---------------------------------------------- item 5: the last value's 8 MiB of text are made after the deadline
@pytest.mark.slow
@pytest.mark.parametrize(("code", "args"), [("a = [0] * 1000\n[a] * 6000", ()),
                                            ("a = [0] * 1_000_000\nb = 1", ("--session", "big"))],
                         ids=["last-value", "session"])
def test_a_run_that_ended_in_time_is_not_abandoned_while_its_value_is_encoded(
        make_launcher: Callable[..., Launcher], code: str, args: tuple[str, ...]) -> None:
    """Breach (item 5, no silent wrong answer): the last value is made as text within VALUE_BUDGET (8 MiB) by
    ``limits.within`` — Python's pure-Python ``iterencode``, a call per token — after the program has ended. A value
    of 3 million small ints (``[a] * 3000``, ``a = [0] * 1000``: 24 MB in the sandbox, made in milliseconds) takes
    seconds to encode to its 8 MiB. With ``--timeout 2`` the warm server's client gave up at 3.5 s: "the run did not
    end 3.5 s after it began, past its deadline; it was abandoned and the server restarts" — the program ended in
    time, its output is lost, and the server restarts under any other run of the workspace (once in two tries on
    this loaded machine; the test uses 6 million and ``--timeout 1``: abandoned at 2.5 s in 2 of 2). In process
    (``CODEACT_SERVER=0``) the 3 million take 7.3 s of a 2 s limit (the watchdog is off by then). Timing: run it
    with ``--runxfail``.

    The same after deeadaa for ``--session`` state (``session``): a state of a million ints (within the new
    1,048,576-value cap, 2 MB as JSON) took 3.6 s to save after a program of milliseconds, in process under
    ``--timeout 2`` (``"duration_ms": 3639``, exit 4.2 s), so through the warm server it is abandoned the same way.

    Checked through the stamped launcher (warm) and ``python -m codeact run --timeout 2`` (in process).
    Fix: make only what can be shown (the 16 KiB window, plus what the store keeps, with the C encoder on bounded
    pieces), and count the encoding in the run's time with a cut said in a note, or give the server's client the
    encoding's time before it abandons a run that has already ended.
    """
    launcher = make_launcher(["view"], limit=1)
    assert launcher.run("print(1)").returncode == 0  # the warm server is up
    done = launcher.run(code, timeout=100, args=args)
    assert done.returncode == 0, (done.stdout[:200], done.stderr[-300:])


# ------------------------- item 9: a nested run's environment turns the PID namespace off for its own bash calls
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PID namespaces, subreapers: Linux")
def test_a_nested_run_cannot_turn_the_namespace_off_for_the_warm_servers_bash(
        make_launcher: Callable[..., Launcher]) -> None:
    """Breach (item 9): the warm server runs each request with the CLIENT's environment (``main(argv,
    environ=message["env"])``), and ``shell._argv`` asks ``bash_namespace.prefix(environ)`` with it, which honours
    ``CODEACT_BASH_NAMESPACE=0``. A program's ``bash`` call runs the repository's launcher with that variable set:
    its thin client (inside the call's namespace) hands a nested run to the warm server (outside it), whose bash
    calls then run with no namespace. There the escape docs/security.md names as closed by the namespace works
    again: ``env -i setsid bash -c 'exec -a NAME sleep 120' &`` (no call mark, a session of its own), then
    ``kill -9 $PPID`` (the supervisor): the sleep is re-parented to the warm server, which the orphan sweep skips
    (unmarked). Seen: the nested bash runs in the host's PID namespace (``/proc/self/ns/pid``), and the ``sleep``
    still runs, a child of the warm server, seconds after both runs ended; without the variable the same program
    runs in a namespace of its own and leaves nothing.

    Checked through the stamped launcher, its warm server, the real bash and util-linux unshare (this machine makes
    namespaces: the same program without the variable leaves nothing). Fix: read the opt-out (and every setting
    that weakens a bound) from the server's own environment, never a request's; or refuse CODEACT_* that loosen
    limits in a request whose client runs inside a bash call (CODEACT_BASH_CALL set).
    """
    mark = f"rt14nest{os.getpid()}"
    launcher = make_launcher(["view", "create", "bash"], limit=60)
    inner = ("print(bash(command=\"env -i setsid bash -c 'exec -a " + mark + " sleep 120' "
             "</dev/null >/dev/null 2>&1 & sleep 0.5; kill -9 $PPID; echo inner\"))\n")
    outer = ("create(path='inner.py', file_text=" + repr(inner) + ")\n"
             "print(bash(command='CODEACT_BASH_NAMESPACE=0 .codeact/bin/codeact run --timeout 30 --file inner.py'))\n")
    try:
        assert launcher.run("print(1)").returncode == 0  # the warm server is up
        done = launcher.run(outer, timeout=120)
        assert done.returncode == 0, (done.stdout[-400:], done.stderr[-400:])
        time.sleep(3)
        left = _processes_named(mark)
        assert not left, f"a process the program started still runs after its run ended: {left} ({done.stdout[-300:]})"
    finally:
        for pid in _processes_named(mark):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
