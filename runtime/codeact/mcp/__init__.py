"""MCP servers as sandbox tools: configuration, discovery into a lock, sessions, rendering.

Importing this package (or any module in it) never imports the ``mcp`` SDK; only opening a connection does.

- :func:`codeact.mcp.config.load_servers` — the servers the Copilot CLI would start here, with problems.
- :func:`codeact.mcp.discovery.discover` / ``codeact discover [--check]`` — list tools into the lock.
- :func:`codeact.mcp.render.budget_lines` — the servers within the always-on byte budget, for instructions.
- :func:`codeact.mcp.bindings.mcp_tools` — sandbox tools backed by one lazy session per server, plus ``mcp_call`` and
  ``mcp_resource``; their sessions: :mod:`codeact.mcp.sessions` opens one, :mod:`codeact.mcp.session_pool` keeps a
  run's (the warm server's across runs) on one event-loop thread, :mod:`codeact.mcp.results` reads what they return.
- :func:`codeact.mcp.cache.repo_lock` / :func:`~codeact.mcp.cache.cached_lock` — this machine's locks (the user's
  own servers in repo scope; everything in global and plugin scope).
- :mod:`codeact.mcp.listing`, :mod:`codeact.mcp.tool_search` — ``codeact tools``, ``describe`` and ``search``.
"""
