"""A hand-written MCP stdio server (no SDK) that can send what a real SDK would refuse to: bad tool schemas.

``RAW_SCHEMA`` (JSON) is the input schema of its one tool ``thing`` (default: a string schema, which MCP forbids).
``RAW_START_DELAY`` (seconds) delays the start: with no SDK to import, it starts in a few milliseconds otherwise,
which makes it the server for measuring how discovery overlaps waiting servers. ``thing`` echoes its arguments.
"""
import json
import os
import sys
import time

SCHEMA = json.loads(os.environ.get("RAW_SCHEMA", '{"type": "string"}'))
time.sleep(float(os.environ.get("RAW_START_DELAY", "0")))


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        continue  # notifications
    if method == "initialize":
        reply(msg_id, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                       "serverInfo": {"name": "raw", "version": "0"}})
    elif method == "tools/list":
        reply(msg_id, {"tools": [{"name": "thing", "description": "A tool with a bad schema.",
                                  "inputSchema": SCHEMA}]})
    elif method == "tools/call":
        reply(msg_id, {"content": [{"type": "text", "text": json.dumps(msg["params"].get("arguments") or {})}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                     "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
        sys.stdout.flush()
