"""The Copilot CLI settings CodeAct owns in exclusive mode (repo scope): ``.github/copilot/settings.local.json``.

It holds one key, ``disabledMcpServers``: every MCP server of the repository (the lock's workspace servers and the
``mcp_exclude`` ones). In exclusive mode the hook denies each of their tools when the model calls it directly; the
model reaches them only inside a CodeAct program, and CodeAct starts the servers itself (it does not read this
setting). Disabled in the CLI, their schemas stop riding in every model request. The CLI (1.0.102) reads the
setting from ``.github/copilot/settings.json``, ``settings.local.json`` and ``$COPILOT_HOME/settings.json`` and
merges the lists; ``copilot --enable-mcp-server NAME`` turns one back on for a session (docs/context.md).

The file is the user's (personal, usually git-ignored): the template does not render it. `codeact refresh`, which
runs after `copier copy` and after every `copier update` in the real project, merges CodeAct's entries into it in
exclusive mode and takes out only those in any other mode (and `codeact uninstall` too).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..layout import CLI_SETTINGS

RECORD = ".codeact/cache/cli-settings.json"  # what CodeAct put into CLI_SETTINGS on this machine


def disabled_servers(lock: Mapping[str, Any] | None, exclude: Iterable[str] = ()) -> list[str]:
    """The repository's MCP servers, sorted: the workspace servers of ``lock`` and the excluded ones."""
    servers = (lock or {}).get("servers") or {}
    names = {name for name, entry in servers.items() if (entry or {}).get("scope", "workspace") == "workspace"}
    return sorted(names | {str(name) for name in exclude})


def render(lock: Mapping[str, Any] | None, exclude: Iterable[str] = ()) -> str:
    """The file's text when CodeAct's entries are all it holds."""
    return json.dumps({"disabledMcpServers": disabled_servers(lock, exclude)}, indent=2) + "\n"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # the user's file, unreadable as JSON: never rewritten
    return data if isinstance(data, dict) else None


def _write(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.codeact-tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def sync(project: Path, exclusive: bool | None = None) -> bool:
    """Merge CodeAct's entries into the user's file (exclusive mode), or take out only those (any other mode);
    returns whether the file changed. What CodeAct added, and whether it created the file, is recorded per machine
    (:data:`RECORD`, like the file itself): a file that existed before is never deleted, and the user's own
    entries and keys are kept."""
    from ..mcp.config import read_exclusions
    from ..mcp.lock import read_lock

    if exclusive is None:
        exclusive = _enforcement(project) == "exclusive"
    path, record_path = project / CLI_SETTINGS, project / RECORD
    record = _load(record_path) or {}
    added = [n for n in record.get("added") or [] if isinstance(n, str)]
    created = bool(record.get("created"))
    existed = path.is_file()
    data = _load(path)
    if data is None:
        return False
    current = [n for n in data.get("disabledMcpServers") or [] if isinstance(n, str)]
    own = [n for n in current if n not in added]
    if exclusive:
        wanted = disabled_servers(read_lock(project), read_exclusions(project))
        ours = [n for n in wanted if n not in own]
        merged = {**data, "disabledMcpServers": own + ours}
        _write(record_path, {"created": created or not existed, "added": ours})
        if existed and merged == data:
            return False
        _write(path, merged)
        return True
    if not record_path.exists():
        return False
    record_path.unlink()
    remaining = {**data, "disabledMcpServers": own}
    if not own:
        remaining.pop("disabledMcpServers")
    if created and not remaining:
        path.unlink(missing_ok=True)
        return existed
    if remaining == data:
        return False
    _write(path, remaining)
    return True


def _enforcement(project: Path) -> str:
    try:
        settings = json.loads((project / ".codeact/settings.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    return str(settings.get("enforcement", "")) if isinstance(settings, dict) else ""
