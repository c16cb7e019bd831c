"""The token and status file: private, stable across restarts, so a provider reconnects by itself."""
from __future__ import annotations

import stat
import time

from codeact.providers.helper import Provider
from codeact.providers.hub import ProviderHub
from codeact.providers.state import open_state, read_status


def wait_connected(hub: ProviderHub, seconds: float = 10.0) -> None:
    """Until a provider is connected to ``hub`` (or ``seconds`` pass: the assertion after says what failed)."""
    until = time.monotonic() + seconds
    while not hub.connected and time.monotonic() < until:
        time.sleep(0.02)


def test_the_token_is_random_private_and_kept(tmp_path):
    folder = tmp_path / "state"
    first = open_state(folder)
    assert len(first.token) >= 32 and first.port == 0
    assert stat.S_IMODE(first.token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert open_state(folder).token == first.token
    assert open_state(tmp_path / "other").token != first.token


def test_a_restarted_hub_keeps_token_and_port_and_the_helper_reconnects(tmp_path, run_program):
    folder = tmp_path / "state"
    state = open_state(folder, "srv")
    assert state.token_file.name == "srv.providers.token"
    hub = ProviderHub(token=state.token, reserved=tuple, state_dir=folder, state_name="srv")
    url = hub.start()
    status = read_status(folder, "srv")
    assert status["url"] == url and status["token_file"] == str(state.token_file) == hub.status()["token_file"]
    assert stat.S_IMODE(state.status_file.stat().st_mode) == 0o600

    app = Provider("echo")

    @app.tool
    def say(text: str) -> str:
        """Echo."""
        return text

    app.start(state_dir=folder, retry=0.05)  # the server's folder: its status file and the token file it names
    try:
        assert run_program("echo.say(text='one')", hub.tools()).result == "one"
        hub.stop()
        again = open_state(folder, "srv")
        assert (again.token, again.port) == (state.token, status["port"])
        hub = ProviderHub(token=again.token, reserved=tuple, state_dir=folder, state_name="srv")
        assert hub.start() == url  # the port was free: the same URL
        wait_connected(hub)  # the helper retries every 0.05 s
        assert run_program("echo.say(text='two')", hub.tools()).result == "two"
    finally:
        app.stop()
        hub.stop()


def test_a_busy_port_falls_back_to_a_free_one():
    first = ProviderHub(token="k" * 40, reserved=tuple)
    taken = int(first.start().rsplit(":", 1)[1].split("/")[0])
    second = ProviderHub(token="k" * 40, reserved=tuple)
    try:
        assert f":{taken}/" not in second.start(port=taken)
    finally:
        second.stop()
        first.stop()


def test_the_helper_finds_the_servers_status_file_by_its_stem(tmp_path, run_program):
    folder = tmp_path / "state"
    state = open_state(folder, "codeact-abc123")
    hub = ProviderHub(token=state.token, reserved=tuple, state_dir=folder, state_name="codeact-abc123")
    hub.start()
    app = Provider("stems")

    @app.tool
    def ping() -> str:
        """Pong."""
        return "pong"

    try:
        app.start(state_dir=folder)
        assert run_program("stems.ping()", hub.tools()).result == "pong"
    finally:
        app.stop()
        hub.stop()



def test_with_several_servers_the_helper_joins_the_one_of_its_workspace(tmp_path, run_program, monkeypatch):
    """Issue 43.6: the documented ``serve(state_dir=...)`` works where several CodeAct servers keep their files in
    one folder (one per workspace): it joins the server of the current folder's repository, or of ``workspace=``;
    a workspace none of them serves is refused, naming them."""
    import os

    import pytest

    from codeact.client import socket_path
    from codeact.providers.helper import ProviderRefused

    folder = tmp_path / "state"
    repos = {name: tmp_path / name for name in ("alpha", "beta")}
    hubs = {}
    for name, repo in repos.items():
        (repo / ".git").mkdir(parents=True)
        (repo / "src").mkdir()
        stem = os.path.basename(socket_path(str(folder), os.path.realpath(repo)))[:-len(".sock")]
        hubs[name] = ProviderHub(token=open_state(folder, stem).token, reserved=tuple, state_dir=folder,
                                 state_name=stem)
        hubs[name].start()
    apps = []
    try:
        monkeypatch.chdir(repos["beta"] / "src")  # the current folder's repository
        here = Provider("here")
        here.tool(lambda: "beta", name="where", description="Which server.")
        here.start(state_dir=folder)
        named = Provider("named")
        named.tool(lambda: "alpha", name="where", description="Which server.")
        named.start(state_dir=folder, workspace=repos["alpha"])
        apps += [here, named]
        assert set(hubs["beta"].tools()) == {"here.where"} and set(hubs["alpha"].tools()) == {"named.where"}
        assert run_program("here.where()", hubs["beta"].tools()).result == "beta"
        stray = Provider("stray")
        with pytest.raises(ProviderRefused, match=r"2 server\(s\) .* none for"):
            stray.serve(state_dir=folder, workspace=tmp_path, reconnect=False)
    finally:
        for app in apps:
            app.stop()
        for hub in hubs.values():
            hub.stop()


def _squat(port: int, seconds: float) -> bytes:
    """What a listener that binds ``port`` gets from whoever connects within ``seconds``."""
    import socket

    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    got = b""
    try:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)
        squatter.settimeout(seconds)
        try:
            conn, _ = squatter.accept()
            conn.settimeout(3)
            while b"\r\n\r\n" not in got:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                got += chunk
            conn.close()
        except OSError:
            pass
    finally:
        squatter.close()
    return got


def test_a_provider_never_sends_its_token_to_whoever_took_the_hubs_port_after_it_stopped(tmp_path):
    """Red team round 6: the status file outlived its hub and the provider reconnected each second to the URL it
    names, token in its headers: whoever bound the freed loopback port got the token. The hub now marks the status
    file stopped before it closes its port, and the provider re-reads it before each connection."""
    import threading

    folder = tmp_path / "state"
    state = open_state(folder)
    hub = ProviderHub(token=state.token, reserved=lambda: (), state_dir=folder)
    url = hub.start()
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    provider = Provider("demo")
    provider.tool(lambda x: x, name="echo", description="echo")
    provider.start(state_dir=folder, timeout=20)
    hub.stop()  # the server ends; the provider starts reconnecting
    try:
        got = _squat(port, 5)
    finally:
        threading.Thread(target=provider.stop, daemon=True).start()
    assert state.token.encode() not in got, "the provider sent the hub's token to a listener on the freed port"
    status = read_status(folder)
    assert "url" not in status and status["stopped"] is True and status["port"] == port, status
    again = ProviderHub(token=state.token, reserved=lambda: (), state_dir=folder)
    try:
        assert again.start() == url, "the next hub still reuses the port"
    finally:
        again.stop()


def test_a_provider_sends_no_token_to_a_listener_of_another_user(monkeypatch):
    """A hub killed outright leaves its status file naming its port; another user who binds it must get nothing:
    the provider connects, asks the kernel whose the other end is (/proc/net/tcp on Linux), and sends its headers
    only to its own user's listener. Here the listener is "another user's" because getuid() says so."""
    import os
    import socket
    import threading

    import pytest

    from codeact.providers import peer

    if not all(path.exists() for path in peer.PROC_TABLES):
        pytest.skip("the owner of a socket is read from /proc/net/tcp, which this system lacks")
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    token = "t" * 40
    provider = Provider("demo")
    provider.tool(lambda x: x, name="echo", description="echo")
    monkeypatch.setattr(peer.os, "getuid", lambda: os.geteuid() + 1)
    thread = threading.Thread(target=provider.serve, args=(f"ws://127.0.0.1:{port}/providers", token),
                              kwargs={"reconnect": False}, daemon=True)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    listener.settimeout(5)
    thread.start()
    conn, _ = listener.accept()  # the provider did connect: only the kernel's table told it whose this is
    conn.settimeout(2)
    try:
        got = conn.recv(4096)
    except OSError:
        got = b""
    conn.close()
    listener.close()
    thread.join(5)
    assert token.encode() not in got and got == b"", got


def test_the_kernel_names_this_user_as_the_owner_of_a_hub_it_started():
    import os
    import socket

    import pytest

    from codeact.providers import peer

    if not all(path.exists() for path in peer.PROC_TABLES):
        pytest.skip("the owner of a socket is read from /proc/net/tcp, which this system lacks")
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            listener = socket.socket(family)
            listener.bind((host, 0))
        except OSError:
            continue  # no IPv6 loopback here
        listener.listen(1)
        sock = peer.connect_own(host, listener.getsockname()[1], 5)
        assert peer.peer_uid(sock) == os.getuid()
        sock.close()
        listener.close()
