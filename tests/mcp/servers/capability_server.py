"""A hand-written MCP stdio server (no SDK) whose tool list depends on the client's declared capabilities, like
``@modelcontextprotocol/server-everything``: ``echo`` always; ``ask_model`` only for a client that declares
``sampling``, ``ask_user`` only for one that declares ``elicitation``, ``list_roots`` only for ``roots``.

``CAP_LOG`` (a path): each ``initialize``'s ``params.capabilities`` is appended there as one JSON line (what a
client such as the Copilot CLI declares). ``CAP_EXTRA`` (a path): while that file exists, ``extra`` is offered too
(a server whose tools change while its configuration does not).
"""
import json
import os
import sys

CONDITIONAL = {"sampling": "ask_model", "elicitation": "ask_user", "roots": "list_roots"}
OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
declared: dict = {}


def answer(msg):
    """The JSON-RPC response to one request (None for a notification)."""
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        return None
    if method == "initialize":
        declared.update((msg.get("params") or {}).get("capabilities") or {})
        if os.environ.get("CAP_LOG"):
            with open(os.environ["CAP_LOG"], "a") as log:
                log.write(json.dumps(declared) + "\n")
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "capability", "version": "0"}}
    elif method == "tools/list":
        names = ["echo"] + [tool for cap, tool in CONDITIONAL.items() if cap in declared]
        if os.environ.get("CAP_EXTRA") and os.path.exists(os.environ["CAP_EXTRA"]):
            names.append("extra")
        result = {"tools": [{"name": n, "description": f"The {n} tool.", "inputSchema": OBJECT} for n in names]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": json.dumps(msg["params"].get("arguments") or {})}]}
    else:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
