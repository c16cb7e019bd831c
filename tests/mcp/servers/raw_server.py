"""A hand-written MCP stdio server (no SDK) that can send what a real SDK would refuse to: bad tool schemas.

``RAW_SCHEMA`` (JSON) is the input schema of its tool ``thing`` (default: a string schema, which MCP forbids).
``RAW_TOOLS`` (JSON list) adds tools as written (e.g. one with ``"execution": {"taskSupport": "required"}``).
``RAW_TOOL_COUNT`` (N) adds N valid tools ``tool_0000``... whose descriptions hold ``word<i>`` and, every 7th, the
word ``invoice`` (for the context-budget and search tests). ``RAW_PAGE`` (N) lists N tools per page (cursors).
``python raw_server.py --http PORT`` serves the same over streamable HTTP on 127.0.0.1 (JSON responses only).
``RAW_START_DELAY`` (seconds) delays the start: with no SDK to import, it starts in a few milliseconds otherwise,
which makes it the server for measuring how discovery overlaps waiting servers. ``thing`` echoes its arguments.
"""
import json
import os
import sys
import time

SCHEMA = json.loads(os.environ.get("RAW_SCHEMA", '{"type": "string"}'))
time.sleep(float(os.environ.get("RAW_START_DELAY", "0")))
TOOLS = [{"name": "thing", "description": "A tool with a bad schema.", "inputSchema": SCHEMA}]
TOOLS += json.loads(os.environ.get("RAW_TOOLS", "[]"))
TOOLS += [{"name": f"tool_{i:04d}", "description": f"Tool number {i}: handles word{i}"
           + (" and every invoice" if i % 7 == 0 else "") + ".",
           "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}, "label": {"type": "string"}},
                           "required": ["n"]}}
          for i in range(int(os.environ.get("RAW_TOOL_COUNT", "0")))]
PAGE = int(os.environ.get("RAW_PAGE", "0")) or len(TOOLS) or 1


def answer(msg):
    """The JSON-RPC response to one request (None for a notification)."""
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        return None  # notifications
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "0"}}
    elif method == "tools/list":
        start = int((msg.get("params") or {}).get("cursor") or 0)
        result = {"tools": TOOLS[start:start + PAGE]}
        if start + PAGE < len(TOOLS):
            result["nextCursor"] = str(start + PAGE)
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": json.dumps(msg["params"].get("arguments") or {})}]}
    else:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def serve_http(port):
    """Streamable HTTP, the simplest legal form: every POST answered with one JSON body, no SSE stream."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(405)
            self.end_headers()

        def do_DELETE(self):
            self.send_response(200)
            self.end_headers()

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            out = answer(body)
            if out is None:
                self.send_response(202)
                self.end_headers()
                return
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if len(sys.argv) >= 3 and sys.argv[1] == "--http":
    serve_http(int(sys.argv[2]))
for line in sys.stdin:
    if not line.strip():
        continue
    out = answer(json.loads(line))
    if out is not None:
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
