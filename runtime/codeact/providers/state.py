"""The hub's state in a private folder: a random token (file 0600) and a status file, both kept across restarts
so that a provider started once reconnects to the next server with the same token (and, when free, port)."""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..privatedir import ensure_private_dir

TOKEN_FILE = "providers.token"  # "STEM.providers.token" with a stem (the server's socket name)
STATUS_FILE = "providers.json"


class HubState(NamedTuple):
    """What a hub in ``folder`` uses: its ``token`` (kept in ``token_file``) and the ``port`` it had last time."""

    folder: Path
    token: str
    token_file: Path
    port: int = 0
    stem: str = ""

    @property
    def status_file(self) -> Path:
        return self.folder / _named(STATUS_FILE, self.stem)

    def record(self, url: str) -> None:
        """Write the status file (0600) for providers to find: ``{"url", "token_file", "port", "pid"}``."""
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        _write_private(self.status_file, json.dumps({"url": url, "token_file": str(self.token_file), "port": port,
                                                     "pid": os.getpid()}, indent=2) + "\n")


    def retire(self, url: str) -> None:
        """Mark the status file stopped (no ``url``; the port is kept for the next hub) if it is still ``url``'s:
        a provider reads it before each connection, and must not send the token to whoever binds the port next."""
        status = read_status(self.folder, self.stem)
        if status.get("url") == url and status.get("pid") == os.getpid():
            _write_private(self.status_file, json.dumps({"token_file": str(self.token_file),
                                                         "port": status.get("port", 0), "stopped": True},
                                                        indent=2) + "\n")


def _named(name: str, stem: str) -> str:
    return f"{stem}.{name}" if stem else name


def open_state(folder: Path | str, stem: str = "") -> HubState:
    """The state in ``folder`` (made 0700 if missing): the token file's token, made on first use, and the port
    the last status file names (0 if none); :class:`~codeact.errors.PrivateFolderError` when ``folder`` is a link,
    not a folder or another user's. ``stem`` prefixes the file names (one folder, several servers)."""
    root = Path(folder)
    ensure_private_dir(root, what="provider state folder", parents=True)
    token_file = root / _named(TOKEN_FILE, stem)
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    except OSError as exc:
        raise ConfigError(f"cannot read the provider token file {token_file}: {exc}") from None
    if len(token) < 32:  # missing, empty or truncated: a fresh one
        token = secrets.token_urlsafe(32)
        _write_private(token_file, token + "\n")
    port = read_status(root, stem).get("port", 0)
    return HubState(root, token, token_file, port if isinstance(port, int) else 0, stem)


def read_status(folder: Path | str, stem: str = "") -> dict[str, Any]:
    """The status file of ``folder`` as a dict (``{}`` when missing or unreadable)."""
    try:
        data = json.loads((Path(folder) / _named(STATUS_FILE, stem)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically by a file only its owner can read."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if hasattr(os, "fchmod"):  # a file left by an older umask keeps no wider mode
            os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


__all__ = ["HubState", "open_state", "read_status"]
