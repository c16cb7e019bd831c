"""A scripted OpenAI-compatible model on 127.0.0.1, for driving the real Copilot CLI offline.

The CLI's bring-your-own-model mode (``COPILOT_PROVIDER_BASE_URL``) talks to any OpenAI chat-completions endpoint.
This server answers it from a SCRIPT, one step per model request, and records every request body it receives, so a
test (or a benchmark) can assert what the model would have seen: the system prompt, the tools offered, every tool
result, and the size of each request in bytes.

    from tests.copilot.mock_model import MockModel, call, text

    with MockModel([call("view", path="README.md"), text("done")]) as model:
        ...  # run copilot with COPILOT_PROVIDER_BASE_URL=model.base_url
        assert model.requests[1].tool_results()[0].content == "# demo\\n"

A step is one of:
- ``call(name, **arguments)``: one tool call;
- a list of ``call(...)``: several tool calls in ONE turn (parallel tool calls);
- ``text("...")`` or a plain ``str``: the final answer;
- a callable taking the ``ChatRequest`` being answered (it holds the results of the previous step's calls) and
  returning any of the above.
When the script runs out, the server answers with a final text and records the fact in ``errors``.

Standard library only. Streaming replies use the chunk format the CLI (OpenAI JS SDK 5.x) accepts: see
tests/copilot/README.md.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatRequest", "MockModel", "Text", "ToolCall", "ToolResult", "call", "text"]

HOST = "127.0.0.1"
EXHAUSTED = "mock-model: the script has no step left for this request."


@dataclass(frozen=True)
class ToolCall:
    """One scripted tool call. ``arguments`` is a dict (sent as JSON) or a raw JSON string."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class Text:
    """A scripted final answer: the model stops calling tools."""

    content: str


Reply = ToolCall | Sequence[ToolCall] | Text | str
Step = Reply | Callable[["ChatRequest"], Reply]


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A scripted call of tool ``name`` with keyword ``arguments``."""
    return ToolCall(name, arguments)


def text(content: str) -> Text:
    """A scripted final answer."""
    return Text(content)


@dataclass(frozen=True)
class ToolResult:
    """A tool result as the CLI sent it back to the model."""

    call_id: str
    name: str | None  # the tool's name, from the assistant message that called it
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One request the mock received: the raw body, its JSON, and helpers over the OpenAI chat format."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any  # parsed JSON (None when the body was empty or not JSON)

    @property
    def size(self) -> int:
        """Bytes of the request body, as sent on the wire."""
        return len(self.raw)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered to the model, in the order offered."""
        return [t.get("function", {}).get("name", t.get("name")) for t in self.tools]

    @property
    def system(self) -> str:
        """The text of every system message, joined."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages if m.get("role") == "system")

    @property
    def user(self) -> str:
        """The text of every user message, joined."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages if m.get("role") == "user")

    def tool_results(self) -> list[ToolResult]:
        """The tool results that follow the last assistant message: what the previous step's calls returned."""
        messages = self.messages
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        names = {}
        if last >= 0:
            for tc in messages[last].get("tool_calls") or []:
                names[tc.get("id")] = tc.get("function", {}).get("name")
        return [ToolResult(m.get("tool_call_id", ""), names.get(str(m.get("tool_call_id"))), _content_text(m.get("content")))
                for m in messages[last + 1:] if m.get("role") == "tool"]

    def all_tool_results(self) -> list[ToolResult]:
        """Every tool result in the conversation so far, in order."""
        names: dict[str, str | None] = {}
        out = []
        for m in self.messages:
            for tc in m.get("tool_calls") or []:
                names[tc.get("id")] = tc.get("function", {}).get("name")
            if m.get("role") == "tool":
                out.append(ToolResult(m.get("tool_call_id", ""), names.get(str(m.get("tool_call_id"))),
                                      _content_text(m.get("content"))))
        return out


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


class MockModel:
    """The scripted model server. ``start()``/``stop()`` or use it as a context manager.

    ``requests`` holds the chat-completion requests (``all_requests`` every request, ``GET /v1/models`` included),
    ``replies`` what was answered to each chat request, and ``errors`` anything a test should fail on (script
    exhausted, a callable step that raised, an unknown path). ``load(script)`` resets all of them for a new session.
    ``chunk_size`` splits streamed text and tool-call arguments into pieces of that many characters, as real
    providers do; 0 sends each in one piece.
    """

    def __init__(self, script: Iterable[Step] = (), *, model: str = "mock-model", chunk_size: int = 16) -> None:
        self.model = model
        self.chunk_size = chunk_size
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)
        self.load(script)

    # -- lifecycle -----------------------------------------------------------------------------------------------
    def start(self) -> MockModel:
        if self._server is None:
            self._server = ThreadingHTTPServer((HOST, 0), _handler_for(self))
            self._server.daemon_threads = True
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="mock-model", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = self._thread = None

    def __enter__(self) -> MockModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the mock model is not started")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The value for ``COPILOT_PROVIDER_BASE_URL``."""
        return f"http://{HOST}:{self.port}/v1"

    def env(self) -> dict[str, str]:
        """The environment that points the Copilot CLI at this model, offline."""
        return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": self.base_url, "COPILOT_MODEL": self.model}

    # -- script and records --------------------------------------------------------------------------------------
    def load(self, script: Iterable[Step]) -> None:
        """Replace the script and forget every recorded request: a fresh session."""
        with self._lock:
            self._script: list[Step] = list(script)
            self._next = 0
            self.all_requests: list[ChatRequest] = []
            self.requests: list[ChatRequest] = []
            self.replies: list[dict[str, Any]] = []
            self.errors: list[str] = []

    @property
    def steps_left(self) -> int:
        return len(self._script) - self._next

    @property
    def input_bytes(self) -> int:
        """The sum of all chat request bodies: what a provider bills as input."""
        return sum(r.size for r in self.requests)

    @property
    def peak_request_bytes(self) -> int:
        return max((r.size for r in self.requests), default=0)

    def _record(self, request: ChatRequest) -> None:
        with self._lock:
            self.all_requests.append(request)

    def _answer(self, request: ChatRequest) -> dict[str, Any]:
        """The assistant message for ``request``: the next step of the script, resolved."""
        with self._lock:
            self.requests.append(request)
            if self._next < len(self._script):
                step = self._script[self._next]
                self._next += 1
            else:
                step = None
                self.errors.append(f"request {len(self.requests)}: {EXHAUSTED}")
        if step is None:
            reply: Reply = Text(EXHAUSTED)
        elif callable(step) and not isinstance(step, (ToolCall, Text, str)):
            try:
                reply = step(request)
            except Exception as exc:  # noqa: BLE001 - reported to the test through ``errors``
                with self._lock:
                    self.errors.append(f"request {len(self.requests)}: step raised {exc!r}")
                reply = Text(f"mock-model: step raised {exc!r}")
        else:
            reply = step
        message = self._message(reply)
        with self._lock:
            self.replies.append(message)
        return message

    def _message(self, reply: Reply) -> dict[str, Any]:
        if isinstance(reply, str):
            reply = Text(reply)
        if isinstance(reply, Text):
            return {"role": "assistant", "content": reply.content}
        calls = [reply] if isinstance(reply, ToolCall) else list(reply)
        if not calls or not all(isinstance(c, ToolCall) for c in calls):
            raise TypeError(f"a step must be call(...), a list of call(...), text(...) or str, not {reply!r}")
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id or f"call_{next(self._ids)}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments_json()}} for c in calls]}

    # -- wire format ---------------------------------------------------------------------------------------------
    def completion(self, message: dict[str, Any], request: ChatRequest) -> dict[str, Any]:
        """A non-streaming ``chat.completion`` object."""
        return {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
                "model": self.model, "choices": [{"index": 0, "message": message, "logprobs": None,
                                                  "finish_reason": _finish_reason(message)}],
                "usage": _usage(request, message)}

    def chunks(self, message: dict[str, Any], request: ChatRequest) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` objects of a streamed reply (see README.md for the format)."""
        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": self.model}

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                    **extra}

        yield chunk({"role": "assistant", "content": ""})
        if message.get("content"):
            for piece in _pieces(message["content"], self.chunk_size):
                yield chunk({"content": piece})
        for index, tc in enumerate(message.get("tool_calls") or []):
            yield chunk({"tool_calls": [{"index": index, "id": tc["id"], "type": "function",
                                         "function": {"name": tc["function"]["name"], "arguments": ""}}]})
            for piece in _pieces(tc["function"]["arguments"], self.chunk_size):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, _finish_reason(message))
        if ((request.body or {}).get("stream_options") or {}).get("include_usage"):
            yield {**base, "choices": [], "usage": _usage(request, message)}


def _finish_reason(message: dict[str, Any]) -> str:
    return "tool_calls" if message.get("tool_calls") else "stop"


def _usage(request: ChatRequest, message: dict[str, Any]) -> dict[str, int]:
    """Token counts estimated as bytes / 4 (the mock has no tokenizer)."""
    prompt = (request.size + 3) // 4
    completion = (len(json.dumps(message)) + 3) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _pieces(s: str, size: int) -> list[str]:
    if size <= 0 or len(s) <= size:
        return [s]
    return [s[i:i + size] for i in range(0, len(s), size)]


def _handler_for(model: MockModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep pytest output clean
            pass

        def _read(self) -> ChatRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = ChatRequest(self.command, self.path, dict(self.headers.items()), raw, body)
            model._record(request)
            return request

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._read()
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": model.model, "object": "model", "created": 0, "owned_by": "mock"}]})
            else:
                self._not_found()

        def do_POST(self) -> None:  # noqa: N802
            request = self._read()
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._not_found()
                return
            if not isinstance(request.body, dict):
                with model._lock:
                    model.errors.append(f"{self.path}: body is not a JSON object: {request.raw[:200]!r}")
                self._json(400, {"error": {"message": "body must be a JSON object", "type": "invalid_request"}})
                return
            try:
                message = model._answer(request)
            except Exception as exc:  # noqa: BLE001 - a bad script; tell the test, answer the CLI
                with model._lock:
                    model.errors.append(f"request {len(model.requests)}: {exc!r}")
                message = {"role": "assistant", "content": f"mock-model: {exc!r}"}
            if not request.body.get("stream"):
                self._json(200, model.completion(message, request))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in model.chunks(message, request):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def _not_found(self) -> None:
            with model._lock:
                model.errors.append(f"unexpected request {self.command} {self.path}")
            self._json(404, {"error": {"message": f"no route {self.command} {self.path}", "type": "not_found"}})

    return Handler
