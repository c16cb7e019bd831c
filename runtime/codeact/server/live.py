"""Live tool providers on the warm server: the hub (codeact.providers) started, and its tools offered to runs."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
from typing import Any

_HUB: Any = None  # the server's hub, when providers are enabled (one per server process)


def start_providers(server: Any) -> Any:
    """Start the loopback WebSocket endpoint of ``server``; its token and status file live beside the server's
    socket and are kept across restarts (a connected helper reconnects to the next server)."""
    global _HUB
    from ..providers.hub import ProviderHub
    from ..providers.state import open_state
    from ..tools import assemble

    folder = os.path.dirname(server.path)
    stem = os.path.basename(server.path)[:-len(".sock")]
    hub = ProviderHub(token=open_state(folder, stem).token, reserved=lambda: _reserved(server), state_dir=folder,
                      state_name=stem)
    hub.start()
    _HUB = hub
    assemble.LIVE_SOURCES.append(hub.tools)
    assemble.LIVE_CONTEXTS.append(hub.context)
    return hub


def _reserved(server: Any) -> set[str]:
    """Names a provider may not take: every built-in, and the namespaces of the workspace's MCP servers."""
    from ..core.catalog import BUILTINS

    names = set(BUILTINS) | {"mcp_call", "mcp_resource", "user"}
    try:
        from ..mcp.config import load_servers
        from ..providers.hub import identifier

        servers = load_servers(server.workspace, os.environ).servers
        names |= set(servers) | {identifier(n) for n in servers}
    except Exception:  # noqa: BLE001 - a broken MCP configuration is reported by the runs that read it
        pass
    return names


def live_tools() -> dict[str, Any]:
    """The tools connected providers offer now (``{}`` outside the server or without providers)."""
    return _HUB.tools() if _HUB is not None else {}


def provider_context(name: str) -> str | None:
    return _HUB.context(name) if _HUB is not None else None


__all__ = ["live_tools", "provider_context", "start_providers"]
