"""The child process of the hyperlight backend: owns one sandbox, runs one program, and is killed at the deadline.

hyperlight-sandbox has no time limit (an endless loop blocks ``run()`` for ever), so the parent
(``codeact.backends.hyperlight``) starts this file as a script and kills the process when time is up. Tools and
policy stay in the parent: each tool is registered here as a proxy that sends the call to the parent and waits for
the answer. The sandbox is created, used and dropped on this process's main thread (sandboxes are bound to the
thread that created them).

Protocol: one JSON object per line. The parent writes the request first::

    {"factory": "hyperlight_sandbox:Sandbox", "options": {...}, "path": [], "tools": [[registered, name], ...],
     "code": "<guest source>"}

then this process writes ``{"kind": "call", "tool": name, "payload": "<json>"}`` (the parent answers with one line,
the tool's ``{"value": ...}`` or ``{"error": ...}``), ``{"kind": "finish", "payload": ...}`` (answered likewise),
and at the end ``{"kind": "exit", "stdout", "stderr", "exit_code"}`` or ``{"kind": "fail", "stage", "error"}``.
The protocol uses the process's original stdin/stdout; anything else written to stdout goes to stderr.

Standard library only (plus the sandbox library), so it starts fast and never imports the parent's package.
"""
from __future__ import annotations

import importlib
import json
import os
import sys

TYPE_CHECKING = False  # not `typing`: this process starts at every run
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FINISH = "codeact_finish"


class _Channel:
    def __init__(self) -> None:
        self._in = sys.stdin.buffer
        self._out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)  # native code printing to fd 1 must not corrupt the protocol
        sys.stdout = sys.stderr

    def send(self, message: dict[str, Any]) -> None:
        self._out.write((json.dumps(message, ensure_ascii=True) + "\n").encode("ascii"))

    def receive(self) -> dict[str, Any]:
        line = self._in.readline()
        if not line:
            raise SystemExit(0)  # the parent has gone: nothing left to do
        message: dict[str, Any] = json.loads(line)
        return message


def _load(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr or "Sandbox")


def _proxy(channel: _Channel, kind: str, name: str | None) -> Callable[[str], dict[str, Any]]:
    def proxy(payload: str) -> dict[str, Any]:
        channel.send({"kind": kind, "tool": name, "payload": payload})
        return channel.receive()

    proxy.__name__ = name or kind
    return proxy


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


def main() -> int:
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # this folder holds modules (hyperlight.py, ...) that must not shadow installed ones
    channel = _Channel()
    request = channel.receive()
    sys.path[:0] = request.get("path") or []
    try:
        sandbox = _load(request.get("factory") or "hyperlight_sandbox:Sandbox")(**(request.get("options") or {}))
        for registered, name in request.get("tools") or []:
            sandbox.register_tool(registered, _proxy(channel, "call", name))
        sandbox.register_tool(FINISH, _proxy(channel, "finish", None))
    except BaseException as exc:  # noqa: BLE001 - ImportError, bad options, a Rust panic: all go to the parent
        channel.send({"kind": "fail", "stage": "create", "error": _describe(exc)})
        return 0
    try:
        result = sandbox.run(request["code"])
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the VM failed to boot or crashed
        channel.send({"kind": "fail", "stage": "run", "error": _describe(exc)})
        return 0
    channel.send({"kind": "exit", "stdout": result.stdout, "stderr": result.stderr,
                  "exit_code": result.exit_code})
    return 0


if __name__ == "__main__":
    sys.exit(main())
