"""Live tool providers on the warm server: the hub (codeact.providers) started, and its tools offered to runs."""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

_HUB: Any = None  # the server's hub, when providers are enabled (one per server process)


def start_providers(server: Any) -> Any:
    """Start the loopback WebSocket endpoint of ``server`` (its token and status beside the server's socket)."""
    global _HUB
    from ..providers.hub import ProviderHub

    folder = Path(os.path.dirname(server.path))
    stem = Path(server.path).name[:-len(".sock")]
    hub = ProviderHub(token=_token(folder / f"{stem}.providers.token"), reserved=lambda: _reserved(server),
                      state_dir=folder, state_name=stem)
    hub.start()
    _HUB = hub
    return hub


def _token(path: Path) -> str:
    """The endpoint's token: kept across restarts (a 0600 file), so a connected helper can reconnect."""
    try:
        token = path.read_text(encoding="utf-8").strip()
        if len(token) >= 32:
            return token
    except OSError:
        pass
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def _reserved(server: Any) -> set[str]:
    """Names a provider may not take: every built-in, and the namespaces of the workspace's MCP servers."""
    from ..tools.builtin import BUILTINS

    names = set(BUILTINS) | {"mcp_call", "mcp_resource", "user"}
    try:
        from ..mcp.config import load_servers

        names |= set(load_servers(server.workspace, os.environ).servers)
    except Exception:  # noqa: BLE001 - a broken MCP configuration is reported by the runs that read it
        pass
    return names


def live_tools() -> dict[str, Any]:
    """The tools connected providers offer now (``{}`` outside the server or without providers)."""
    return _HUB.tools() if _HUB is not None else {}


def provider_context(name: str) -> str | None:
    return _HUB.context(name) if _HUB is not None else None


__all__ = ["live_tools", "provider_context", "start_providers"]
