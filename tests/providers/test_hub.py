"""The hub with real providers (the shipped helper and raw WebSocket clients), called from programs."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from providers_helpers import TOKEN, tool
from websockets.exceptions import ConnectionClosed, InvalidStatus

from codeact.errors import ToolError
from codeact.providers.helper import Provider, ProviderRefused


def notes_provider(url: str, name: str = "notes") -> Provider:
    app = Provider(name, context="The user's notes app; notes are short texts.")

    @app.tool
    def search(query: str, limit: int = 2) -> list:
        """Find notes containing query."""
        return [f"{query} {i}" for i in range(limit)]

    @app.tool
    def fail(why: str) -> None:
        """Always fails."""
        raise ValueError(why)

    return app.start(url, TOKEN)


@pytest.fixture
def good(url: str):
    """A provider that keeps working while others misbehave."""
    app = notes_provider(url, "good")
    yield app
    app.stop()


def assert_good_works(hub, run_program) -> None:
    result = run_program("good.search(query='still', limit=1)", hub.tools())
    assert result.ok, result.error
    assert result.result == ["still 0"]


def answer_in_background(conn, reply) -> threading.Thread:
    """Answer the next tool.call on ``conn`` with ``reply(call)`` (a dict to send, or None to close)."""
    def target() -> None:
        call = conn.recv(10)
        assert call["type"] == "tool.call", call
        frame = reply(call)
        if frame is None:
            conn.close()
        else:
            conn.send(frame)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_python_providers_tools_are_called_from_a_program(hub, url, run_program):
    app = notes_provider(url)
    try:
        tools = hub.tools()
        assert sorted(tools) == ["notes.fail", "notes.search"]
        search = tools["notes.search"]
        assert search.source == "live" and search.description == "Find notes containing query."
        assert "provider 'notes'" in search.doc and "/bin/codeact describe notes`" in search.doc
        assert search.parameters["required"] == ["query"]
        assert hub.context("notes") == "The user's notes app; notes are short texts."
        assert hub.connected == 1 and hub.status()["providers"] == [{"name": "notes", "tools": ["fail", "search"]}]
        result = run_program("r = notes.search(query='x')\nr + notes.search(query='y', limit=1)", tools)
        assert result.ok, result.error
        assert result.result == ["x 0", "x 1", "y 0"]
    finally:
        app.stop()


def test_a_providers_error_reaches_the_program_naming_it(hub, url, run_program):
    app = notes_provider(url)
    try:
        result = run_program("notes.fail(why='disk full')", hub.tools())
        assert not result.ok and result.error.type == "RuntimeError"
        assert "notes.fail()" in result.error.message and "'notes' reported an error" in result.error.message
        assert "disk full" in result.error.message
    finally:
        app.stop()


def test_arguments_are_type_checked_from_parameters_before_the_call(hub, url, run_program):
    app = notes_provider(url)
    try:
        result = run_program("notes.search(query=3)", hub.tools())
        assert not result.ok and result.error.type == "TypeError" and "no tool ran" in result.error.message
    finally:
        app.stop()


def test_tools_vanish_on_disconnect_and_a_kept_tool_names_the_provider(hub, url, run_program):
    app = notes_provider(url)
    kept = hub.tools()
    app.stop()
    for _ in range(100):
        if not hub.connected:
            break
        time.sleep(0.02)
    assert hub.connected == 0 and hub.tools() == {} and hub.context("notes") is None
    result = run_program("notes.search(query='x')", kept)
    assert not result.ok
    assert "live provider 'notes' is not connected" in result.error.message
    with pytest.raises(ToolError, match="'notes' is not connected"):
        kept["notes.search"].call(query="x")


@pytest.mark.usefixtures("good")
def test_a_provider_leaving_mid_call_fails_the_call_naming_it(hub, raw, run_program):
    conn = raw()
    assert conn.hello("flaky", [tool("work", "Works.")])["type"] == "hello.ack"
    answer_in_background(conn, lambda _call: None)  # closes instead of answering
    result = run_program("flaky.work()", hub.tools())
    assert not result.ok
    assert "flaky.work(): live provider 'flaky' disconnected before answering" in result.error.message
    assert_good_works(hub, run_program)


def test_a_slow_provider_is_stopped_at_the_runs_deadline(hub, url, run_program):
    app = Provider("slow")
    release = threading.Event()

    @app.tool
    def wait() -> str:
        """Takes long."""
        release.wait(10)
        return "late"

    app.start(url, TOKEN)
    try:
        started = time.monotonic()
        result = run_program("slow.wait()", hub.tools(), timeout=1)
        took = time.monotonic() - started
        assert not result.ok and result.error.type == "TimeoutError"
        assert "slow.wait() was stopped at the run's deadline" in result.error.message
        assert took < 4
    finally:
        release.set()
        app.stop()


def test_calls_from_two_threads_are_in_flight_at_once(hub, url, run_program):
    app = Provider("pair")
    both = threading.Barrier(2, timeout=5)  # breaks unless both calls reach the provider together

    @app.tool
    def meet(who: str) -> str:
        """Waits for the other caller."""
        both.wait()
        return who

    app.start(url, TOKEN)
    results: dict[str, Any] = {}

    def go(who: str) -> None:
        results[who] = run_program(f"pair.meet(who='{who}')", hub.tools())

    try:
        threads = [threading.Thread(target=go, args=(w,)) for w in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        assert {w: (r.ok, r.result) for w, r in results.items()} == {"a": (True, "a"), "b": (True, "b")}
    finally:
        app.stop()


def test_tool_names_are_python_names_and_the_provider_gets_its_own(hub, raw, run_program):
    conn = raw()
    assert conn.hello("browser", [tool("get-page", "The page.", url="string")]) == {
        "type": "hello.ack", "providerId": "browser"}
    seen: list[dict[str, Any]] = []

    def reply(call: dict[str, Any]) -> dict[str, Any]:
        seen.append(call)
        return {"type": "tool.result", "id": call["id"], "data": {"title": "Home"}}  # "data": the synonym

    answer_in_background(conn, reply)
    result = run_program("browser.get_page(url='https://example.org')['title']", hub.tools())
    assert result.ok, result.error
    assert result.result == "Home"
    assert seen[0]["tool"] == "get-page" and seen[0]["args"] == {"url": "https://example.org"}
    assert hub.tools()["browser.get_page"].original_name == "browser.get-page"


def test_tools_update_adds_and_removes_and_reports_a_change(url):
    from websockets.sync.client import connect

    from codeact.providers.hub import ProviderHub

    changes: list[int] = []
    hub = ProviderHub(token=TOKEN, reserved=tuple, on_change=lambda: changes.append(1))
    conn = None
    try:
        url = hub.start()
        conn = connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}, proxy=None)
        conn.send('{"type": "hello", "role": "provider", "name": "app", "tools": [{"name": "a"}]}')
        assert '"hello.ack"' in conn.recv(5)
        conn.send('{"type": "tools.update", "tools": [{"name": "b", "description": "B."}], "remove": ["a"]}')
        for _ in range(100):
            if "app.b" in hub.tools():
                break
            time.sleep(0.02)
        assert sorted(hub.tools()) == ["app.b"] and len(changes) == 2
    finally:
        if conn is not None:
            conn.close()
        hub.stop()


# -- bad messages: refused with a clear error, the connection (and other providers) keep working ---------------

@pytest.mark.usefixtures("good")
def test_unknown_types_are_ignored(hub, raw, run_program):
    conn = raw()
    conn.send({"type": "telemetry", "anything": 1})
    assert conn.hello("app", [tool("ping")])["type"] == "hello.ack"  # no frame answered the unknown type
    assert "app.ping" in hub.tools()
    assert_good_works(hub, run_program)


@pytest.mark.usefixtures("good")
def test_bad_json_gets_an_error_frame_and_the_connection_stays(hub, raw, run_program):
    conn = raw()
    conn.send("{not json")
    assert conn.recv()["code"] == "BAD_JSON"
    conn.send("[1, 2]")
    assert conn.recv()["code"] == "BAD_JSON"
    conn.send({"type": "hello", "name": 3})
    assert conn.recv()["code"] == "BAD_MESSAGE"
    assert conn.hello("app", [tool("ping")])["type"] == "hello.ack"
    assert_good_works(hub, run_program)


@pytest.mark.parametrize("parameters", ["a string", {"type": "string"},
                                        {"type": "object", "properties": {"q": {"type": "strng"}}},
                                        {"type": "object", "required": "q"}],
                         ids=["not-an-object", "not-object-type", "unknown-type", "bad-required"])
@pytest.mark.usefixtures("good")
def test_an_invalid_schema_is_refused_naming_the_tool(hub, raw, run_program, parameters):
    conn = raw()
    reply = conn.hello("app", [tool("ok"), {"name": "broken", "parameters": parameters}])
    assert reply["type"] == "error" and reply["code"] == "INVALID_SCHEMA"
    assert "'broken'" in reply["message"]
    assert not any(name.startswith("app.") for name in hub.tools())
    assert conn.hello("app", [tool("ok")])["type"] == "hello.ack"  # a corrected hello is accepted
    conn.send({"type": "tools.update", "tools": [{"name": "bad", "parameters": parameters}]})
    assert conn.recv()["code"] == "INVALID_SCHEMA"
    assert sorted(n for n in hub.tools() if n.startswith("app.")) == ["app.ok"]
    assert_good_works(hub, run_program)


@pytest.mark.parametrize("name", ["view", "github", "print", "good"],
                         ids=["builtin-tool", "mcp-namespace", "python-builtin", "other-provider"])
@pytest.mark.usefixtures("good")
def test_a_taken_name_is_a_tool_conflict(hub, raw, run_program, name):
    conn = raw()
    reply = conn.hello(name, [tool("x")])
    assert reply["type"] == "error" and reply["code"] == "TOOL_CONFLICT" and repr(name) in reply["message"]
    assert f"{name}.x" not in hub.tools()
    assert_good_works(hub, run_program)


@pytest.mark.parametrize("name", ["my-app", "class", "_hidden", "ünï"])
def test_a_provider_name_programs_cannot_call_is_refused(raw, name):
    assert raw().hello(name, [tool("x")])["code"] == "INVALID_NAME"


@pytest.mark.usefixtures("good")
def test_an_oversized_result_is_refused_and_the_program_told(hub, raw, run_program):
    conn = raw()
    assert conn.hello("big", [tool("dump")])["type"] == "hello.ack"
    answer_in_background(conn, lambda call: {"type": "tool.result", "id": call["id"], "result": "x" * 5000})
    result = run_program("big.dump()", hub.tools())
    assert not result.ok
    assert "over the 1000-byte tool-result cap" in result.error.message and "'big'" in result.error.message
    refusal = conn.recv()
    assert refusal["type"] == "error" and refusal["code"] == "RESULT_TOO_LARGE"
    assert_good_works(hub, run_program)


def test_results_before_hello_or_for_no_call_are_refused(raw):
    conn = raw()
    conn.send({"type": "tool.result", "id": "c1", "result": 1})
    assert conn.recv()["code"] == "NOT_REGISTERED"
    conn.hello("app", [tool("x")])
    conn.send({"type": "tool.result", "id": "c999", "result": 1})
    assert conn.recv()["code"] == "UNKNOWN_CALL"


# -- authentication and the handshake ---------------------------------------------------------------------------

def assert_refused(conn, code: str) -> None:
    frame = conn.recv()
    assert frame["type"] == "error" and frame["code"] == code, frame
    with pytest.raises(ConnectionClosed):
        conn.recv()


@pytest.mark.usefixtures("good")
def test_no_token_is_refused(hub, raw, run_program):
    conn = raw(headers={})
    conn.send({"type": "hello", "role": "provider", "name": "sneaky", "tools": []})
    assert_refused(conn, "AUTH_REQUIRED")
    assert "sneaky" not in str(hub.status())
    assert_good_works(hub, run_program)


@pytest.mark.usefixtures("good")
def test_a_wrong_token_is_refused_in_the_header_and_in_the_auth_frame(hub, raw, run_program):
    assert_refused(raw(headers={"Authorization": "Bearer nope"}), "AUTH_FAILED")
    conn = raw(headers={})
    conn.send({"type": "auth", "token": "nope"})
    assert_refused(conn, "AUTH_FAILED")
    assert_good_works(hub, run_program)


def test_the_auth_frame_lets_a_browser_style_client_in(raw):
    conn = raw(headers={"Origin": "http://localhost:5173"})
    conn.send({"type": "auth", "token": TOKEN})
    assert conn.hello("page", [tool("x")])["type"] == "hello.ack"


def test_a_token_in_the_url_is_refused_at_the_handshake(raw):
    with pytest.raises(InvalidStatus) as caught:
        raw(path=f"?token={TOKEN}")
    assert caught.value.response.status_code == 400
    assert b"Never put the token in the URL" in caught.value.response.body


@pytest.mark.usefixtures("good")
def test_a_foreign_origin_is_refused_at_the_handshake(hub, raw, run_program):
    with pytest.raises(InvalidStatus) as caught:
        raw(headers={"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"})
    assert caught.value.response.status_code == 403
    assert_good_works(hub, run_program)


def test_a_refused_helper_raises_the_servers_reason(url):
    app = Provider("view")  # a built-in's name
    with pytest.raises(TimeoutError) as caught:
        app.start(url, TOKEN, timeout=5)
    assert isinstance(caught.value.__cause__, ProviderRefused) and caught.value.__cause__.code == "TOOL_CONFLICT"
