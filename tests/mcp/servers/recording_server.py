"""A stdio MCP server (no SDK) that writes every line it receives to ``REC_LOG``, for comparing clients.

``REC_TOOLS`` (JSON list) are its tools, ``REC_PAGE`` (N) tools per page; ``REC_ASK`` (a method) is a request it
sends the client before answering the first ``tools/list`` (``ping``, ``roots/list``); ``REC_FAIL`` (a method) is
answered with an error; ``REC_STARTS`` gets a line per start.
"""
import json
import os
import sys

LOG = os.environ["REC_LOG"]
TOOLS = json.loads(os.environ.get("REC_TOOLS", '[{"name": "t", "inputSchema": {"type": "object"}}]'))
PAGE = int(os.environ.get("REC_PAGE", "0")) or len(TOOLS) or 1
ASK = os.environ.get("REC_ASK")
FAIL = os.environ.get("REC_FAIL")
if os.environ.get("REC_STARTS"):
    with open(os.environ["REC_STARTS"], "a") as starts:
        starts.write(f"{os.getpid()}\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    with open(LOG, "a") as log:
        log.write(line)
    msg = json.loads(line)
    if "method" not in msg or "id" not in msg:
        continue  # a notification, or the client's answer to ASK
    if msg["method"] == FAIL:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": "it failed"}})
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "rec", "version": "0"}}
    elif msg["method"] == "tools/list":
        if ASK:
            send({"jsonrpc": "2.0", "id": "ask-1", "method": ASK})
            ASK = None
        start = int((msg.get("params") or {}).get("cursor") or 0)
        result = {"tools": TOOLS[start:start + PAGE]}
        if start + PAGE < len(TOOLS):
            result["nextCursor"] = str(start + PAGE)
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
