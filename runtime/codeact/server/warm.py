"""What the server keeps warm between runs: the imports, a Monty worker pool, the MCP sessions, the live providers."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
from typing import Any

POOL_MAX = 16  # Monty workers at most: one is kept started, more start as runs overlap (a busy run holds one)


def warm_up(server: Any) -> None:
    """Import what every run needs and start what stays up (before the socket listens)."""
    from .. import runner  # noqa: F401 - imported now so the first run does not pay for it
    from ..backends import monty
    from ..cli import build_parser
    from ..core import catalog, outputs, stubs  # noqa: F401
    from ..mcp import session_pool as mcp_client

    build_parser("run")
    monty.keep_warm(processes=POOL_MAX)
    mcp_client.share_sessions()
    if _providers_enabled(os.environ):
        from .live import start_providers

        server.providers = start_providers(server)


def _providers_enabled(environ: Any) -> bool:
    if environ.get("CODEACT_PROVIDERS") is not None:
        return bool(environ.get("CODEACT_PROVIDERS") == "1")
    from ..core.config import load_user_config

    try:
        return load_user_config(environ).get("providers") is True
    except Exception:  # noqa: BLE001 - a broken config.json is reported by the runs that read it
        return False


def mcp_sessions() -> list[dict[str, Any]]:
    """The MCP sessions open now: ``[{"server", "pid"}]``."""
    from ..mcp import session_pool as mcp_client

    return mcp_client.shared_sessions()


def sweep(idle_s: float) -> None:
    """Stop the MCP sessions no run has used for ``idle_s`` seconds (their servers with them)."""
    from ..mcp import session_pool as mcp_client

    shared = mcp_client.share_sessions()
    shared.close_idle(idle_s)


def wind_down(server: Any) -> None:
    """Stop what :func:`warm_up` started: MCP sessions (and their servers), providers, the worker pool."""
    from ..backends import monty
    from ..mcp import session_pool as mcp_client

    try:
        mcp_client.close_shared_sessions()
    finally:
        if server.providers is not None:
            server.providers.stop()
        monty.release_warm()


__all__ = ["POOL_MAX", "mcp_sessions", "warm_up", "wind_down"]
