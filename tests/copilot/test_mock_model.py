"""The scripted mock model on its own, over HTTP, without the Copilot CLI: fast, runs everywhere."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.copilot.mock_model import EXHAUSTED, ChatRequest, MockModel, call, text


def post(model: MockModel, body: dict[str, Any]) -> tuple[str, bytes]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(model.base_url + "/chat/completions", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read()


def sse_events(raw: bytes) -> list[Any]:
    events = []
    for block in raw.decode().split("\n\n"):
        if block.strip():
            assert block.startswith("data: "), block
            payload = block[len("data: "):]
            events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def accumulate(events: list[Any]) -> dict[str, Any]:
    """Rebuild the assistant message from stream chunks the way the OpenAI SDK's stream helper does."""
    message: dict[str, Any] = {"content": "", "tool_calls": {}}
    finish = None
    for event in events:
        if event == "[DONE]":
            continue
        for choice in event["choices"]:
            delta = choice["delta"]
            message["content"] += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                slot = message["tool_calls"].setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] += tc.get("function", {}).get("name") or ""
                slot["arguments"] += tc.get("function", {}).get("arguments") or ""
            finish = choice["finish_reason"] or finish
    message["finish_reason"] = finish
    message["tool_calls"] = [message["tool_calls"][i] for i in sorted(message["tool_calls"])]
    return message


def chat(messages: list[dict[str, Any]], stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {"model": "mock-model", "messages": messages, "stream": stream,
            "tools": [{"type": "function", "function": {"name": "view", "parameters": {}}}], **extra}


SYSTEM = {"role": "system", "content": "You are a test. <custom_instruction>X</custom_instruction>"}
USER = {"role": "user", "content": "hi"}


def test_binds_loopback_only_and_serves_models() -> None:
    with MockModel() as model:
        assert model._server is not None and model._server.server_address[0] == "127.0.0.1"
        assert model.base_url == f"http://127.0.0.1:{model.port}/v1"
        with urllib.request.urlopen(model.base_url + "/models", timeout=10) as resp:
            assert [m["id"] for m in json.load(resp)["data"]] == ["mock-model"]
        assert model.errors == [] and model.requests == [] and len(model.all_requests) == 1


def test_streams_parallel_tool_calls_in_chunks_then_text() -> None:
    script = [[call("view", path="/r/a.md"), call("bash", command="echo hi", description="say hi")], text("done")]
    with MockModel(script, chunk_size=5) as model:
        ctype, raw = post(model, chat([SYSTEM, USER], stream_options={"include_usage": True}))
        assert ctype == "text/event-stream"
        events = sse_events(raw)
        assert events[-1] == "[DONE]" and events[-2]["choices"] == [] and events[-2]["usage"]["prompt_tokens"] > 0
        msg = accumulate(events)
        assert msg["finish_reason"] == "tool_calls" and msg["content"] == ""
        assert [(tc["name"], json.loads(tc["arguments"])) for tc in msg["tool_calls"]] == [
            ("view", {"path": "/r/a.md"}), ("bash", {"command": "echo hi", "description": "say hi"})]
        assert len({tc["id"] for tc in msg["tool_calls"]}) == 2
        # arguments really arrive in pieces, as from a real provider
        assert sum(1 for e in events[:-1] for c in e["choices"] for tc in c["delta"].get("tool_calls") or []) > 4

        ids = [tc["id"] for tc in msg["tool_calls"]]
        follow_up = [SYSTEM, USER,
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": ids[0], "type": "function", "function": {"name": "view", "arguments": "{}"}},
                         {"id": ids[1], "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": ids[0], "content": "Denied by preToolUse hook: no"},
                     {"role": "tool", "tool_call_id": ids[1], "content": [{"type": "text", "text": "hi\n"}]}]
        msg = accumulate(sse_events(post(model, chat(follow_up))[1]))
        assert msg == {"content": "done", "tool_calls": [], "finish_reason": "stop"}

        assert model.errors == [] and model.steps_left == 0
        first, second = model.requests
        assert "<custom_instruction>X</custom_instruction>" in first.system and first.user == "hi"
        assert first.tool_names == ["view"] and first.tool_results() == []
        assert [(r.name, r.content) for r in second.tool_results()] == [
            ("view", "Denied by preToolUse hook: no"), ("bash", "hi\n")]
        assert first.size == len(first.raw) and model.input_bytes == first.size + second.size
        assert model.peak_request_bytes == second.size


def test_non_streaming_reply_and_callable_step() -> None:
    def echo(request: ChatRequest) -> Any:
        return text("echo: " + request.user)

    with MockModel([call("glob", pattern="**/*.py"), echo]) as model:
        body = json.loads(post(model, chat([USER], stream=False))[1])
        assert body["object"] == "chat.completion" and body["choices"][0]["finish_reason"] == "tool_calls"
        tc = body["choices"][0]["message"]["tool_calls"][0]
        assert tc["function"] == {"name": "glob", "arguments": json.dumps({"pattern": "**/*.py"})}
        body = json.loads(post(model, chat([USER], stream=False))[1])
        assert body["choices"][0]["message"] == {"role": "assistant", "content": "echo: hi"}
        assert model.errors == []


def test_script_exhausted_and_failing_step_are_reported() -> None:
    def boom(_request: ChatRequest) -> Any:
        raise ValueError("bad step")

    with MockModel([boom]) as model:
        assert "bad step" in accumulate(sse_events(post(model, chat([USER]))[1]))["content"]
        assert accumulate(sse_events(post(model, chat([USER]))[1]))["content"] == EXHAUSTED
        assert len(model.errors) == 2 and "bad step" in model.errors[0] and EXHAUSTED in model.errors[1]
        model.load([text("fresh")])
        assert model.errors == [] and model.requests == [] and model.steps_left == 1


def test_unknown_route_is_an_error() -> None:
    with MockModel() as model:
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(model.base_url + "/responses", data=b"{}", timeout=10)
        assert info.value.code == 404
        assert model.errors == ["unexpected request POST /v1/responses"]


def test_stop_releases_the_port() -> None:
    model = MockModel().start()
    port = model.port
    model.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
