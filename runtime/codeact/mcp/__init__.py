"""MCP servers as sandbox tools: configuration, discovery into a lock, sessions, rendering.

Importing this package (or any module in it) never imports the ``mcp`` SDK; only opening a connection does.

- :func:`codeact.mcp.config.load_servers` — the servers the Copilot CLI would start here, with problems.
- :func:`codeact.mcp.discovery.discover` / ``codeact discover [--check]`` — list tools into the lock.
- :func:`codeact.mcp.render.render_tool_lines` — one line per exposed tool, for instructions.
- :func:`codeact.mcp.tools.mcp_tools` — sandbox tools backed by one lazy session per server.
"""
