"""The template's life in a repository: the stamped layout, what an update keeps and reports, the MCP section refresh,
the drift check, the global scope's links, uninstall and the organisation's policy."""
