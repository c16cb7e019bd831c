"""Two direct clients of one stdio MCP server, bench_budgets.py's MCP baseline: the official SDK and raw stdlib JSON-RPC.

    python mcp_clients.py sdk|raw CALLS ROUNDS SERVER_COMMAND...

Starts the server, initialises, calls ``echo(text="hi")`` once, then (CALLS > 0) times ROUNDS batches of CALLS
calls on the open session and prints ``{"per_call_us": median}``. With CALLS = 0 it only makes the one call: the
whole process is then the "one MCP tool, everything included" figure. The raw client needs nothing but the stdlib
(run it with ``python -S``).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any


def raw(calls: int, rounds: int, command: list[str]) -> list[float]:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    reader, ids = proc.stdout, iter(range(1, 10**9))

    def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        msg_id = next(ids)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,  # type: ignore[union-attr]
                                     "params": params}).encode() + b"\n")
        while True:
            msg = json.loads(reader.readline())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                result: dict[str, Any] = msg["result"]
                return result

    request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench-raw", "version": "0"}})
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    echo = {"name": "echo", "arguments": {"text": "hi"}}
    assert request("tools/call", echo)["content"][0]["text"] == "hi"
    batches = []
    for _ in range(rounds if calls else 0):
        t0 = time.perf_counter()
        for _ in range(calls):
            request("tools/call", echo)
        batches.append((time.perf_counter() - t0) / calls)
    proc.stdin.close()
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:  # an SDK server may linger after end of input; what a client would do
        proc.terminate()
        proc.wait(timeout=10)
    return batches


def sdk(calls: int, rounds: int, command: list[str]) -> list[float]:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> list[float]:
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("echo", {"text": "hi"})
            assert first.content[0].text == "hi"  # type: ignore[union-attr]
            batches = []
            for _ in range(rounds if calls else 0):
                t0 = time.perf_counter()
                for _ in range(calls):
                    await session.call_tool("echo", {"text": "hi"})
                batches.append((time.perf_counter() - t0) / calls)
            return batches

    return asyncio.run(go())


def main() -> int:
    kind, calls, rounds, command = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    batches = (raw if kind == "raw" else sdk)(calls, rounds, command)
    print(json.dumps({"per_call_us": statistics.median(batches) * 1e6 if batches else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
