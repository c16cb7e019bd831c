"""The warm CodeAct server: one per user, install and workspace, reached by the launcher over a Unix socket.

It keeps what every cold run pays for again — the interpreter with pydantic-monty and the tools imported, a warm
Monty worker pool, the MCP SDK and the MCP sessions — and runs each request with that request's own arguments,
folder, environment and limits. ``daemon`` is the process (socket, lifetime, status), ``runs`` runs one request,
``confighash`` decides when a server is stale; the launcher's side is ``codeact.client``.
"""
