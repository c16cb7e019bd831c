"""The Copilot CLI settings CodeAct owns in exclusive mode (repo scope): ``.github/copilot/settings.local.json``.

It holds one key, ``disabledMcpServers``: every MCP server of the repository (the lock's workspace servers and the
``mcp_exclude`` ones). In exclusive mode the hook denies each of their tools when the model calls it directly; the
model reaches them only inside a CodeAct program, and CodeAct starts the servers itself (it does not read this
setting). Disabled in the CLI, their schemas stop riding in every model request. The CLI (1.0.102) reads the
setting from ``.github/copilot/settings.json``, ``settings.local.json`` and ``$COPILOT_HOME/settings.json`` and
merges the lists; ``copilot --enable-mcp-server NAME`` turns one back on for a session (docs/context.md).

Rendered by the template from the lock (so `codeact drift` renders the same bytes) and rewritten by
`codeact refresh`, which runs after `copier copy` and `copier update` in the real project.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..layout import CLI_SETTINGS


def disabled_servers(lock: Mapping[str, Any] | None, exclude: Iterable[str] = ()) -> list[str]:
    """The repository's MCP servers, sorted: the workspace servers of ``lock`` and the excluded ones."""
    servers = (lock or {}).get("servers") or {}
    names = {name for name, entry in servers.items() if (entry or {}).get("scope", "workspace") == "workspace"}
    return sorted(names | {str(name) for name in exclude})


def render(lock: Mapping[str, Any] | None, exclude: Iterable[str] = ()) -> str:
    """The file's text."""
    return json.dumps({"disabledMcpServers": disabled_servers(lock, exclude)}, indent=2) + "\n"


def rewrite(project: Path) -> bool:
    """Rewrite the file from the lock when the install has one (exclusive mode); returns whether it changed."""
    from ..mcp.config import read_exclusions
    from ..mcp.lock import read_lock

    path = project / CLI_SETTINGS
    if not path.is_file():
        return False
    text = render(read_lock(project), read_exclusions(project))
    if path.read_text(encoding="utf-8") == text:
        return False
    tmp = path.with_name(f".{path.name}.codeact-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return True
