"""The configuration a server serves, as one hash: a run whose hash differs gets a fresh server.

Hashed: the runtime's files (path, size and modification time: ``copier update`` rewrites them) and
``.codeact/settings.json``; the committed MCP lock and this machine's locks, the MCP configuration files Copilot
reads (``.mcp.json``, ``.github/mcp.json``, ``$COPILOT_HOME/mcp-config.json``, ...), Copilot's trusted folders; the
user's ``config.json`` and ``tools/*.py``; and the ``CODEACT_*`` variables that change what a run is offered. Limits
and ``CODEACT_ALLOW_SECRETS`` are not hashed: they travel with each request.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable, Mapping

from .. import paths

# The variables that change which tools a run is offered, or how they are found.
HASHED_VARIABLES = ("CODEACT_TOOLS", "CODEACT_DISABLE", "CODEACT_CONFIG_DIR", "CODEACT_BACKEND", "CODEACT_PROVIDERS",
                    "COPILOT_ALLOW_ALL", "COPILOT_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def runtime_tree(root: Path) -> Iterable[tuple[str, int, int]]:
    """``(path, size, mtime_ns)`` of every runtime source file under ``root`` (the ``codeact`` package)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".in", ".json", ".txt")):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                yield path, st.st_size, st.st_mtime_ns


def inputs(workspace: Path, environ: Mapping[str, str]) -> list[Path]:
    """The files whose content is hashed for ``workspace`` under ``environ``."""
    from ..core.config import codeact_home, user_config_dir
    from ..mcp.cache import cache_path
    from ..mcp.config import config_files

    config = user_config_dir(environ)
    copilot = paths.copilot_home(environ)
    files = [codeact_home() / "settings.json", workspace / ".codeact" / "tools.lock.json",
             cache_path(workspace, environ), cache_path(workspace, environ, user_only=True),
             copilot / "config.json", copilot / "settings.json", config / "config.json"]
    files += [path for path, _shown, _scope in config_files(workspace, environ)]
    tools = config / "tools"
    if tools.is_dir():
        files += sorted(tools.glob("*.py"))
    return files


class RuntimeStamp:
    """The runtime tree's :func:`runtime_tree` entries, taken once, and a cheap exact check that they still hold:
    one ``stat`` per file and per folder (a file added, removed or renamed changes its folder's mtime), no walk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders = [(folder, _mtime(folder)) for folder in _folders(root)]  # first: what comes later is seen
        self.files = list(runtime_tree(root))
        self._digest: bytes | None = None

    def digest(self) -> bytes:
        """The digest of the entries (made once)."""
        if self._digest is None:
            digest = hashlib.sha256()
            for name, size, mtime in self.files:
                digest.update(f"{name}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
            self._digest = digest.digest()
        return self._digest

    def holds(self) -> bool:
        """Whether no runtime file changed, came or went since the stamp was taken."""
        stat = os.stat
        try:
            for folder, mtime in self.folders:
                if stat(folder).st_mtime_ns != mtime:
                    return False
            for path, size, mtime in self.files:
                st = stat(path)
                if st.st_mtime_ns != mtime or st.st_size != size:
                    return False
        except OSError:
            return False
        return True


def _folders(root: Path) -> list[str]:
    found = []
    for folder, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.append(folder)
    return found


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


_STAMP: RuntimeStamp | None = None  # this process's runtime, stamped at its first hash (the server: at start)


def runtime_digest(runtime: Path | None = None) -> bytes:
    """The digest of the runtime tree (this process's package unless ``runtime`` names another), walked again only
    when a file or folder of it changed since the last walk."""
    global _STAMP
    package = Path(__file__).resolve().parent.parent
    if runtime is not None and runtime != package:
        return RuntimeStamp(runtime).digest()
    if _STAMP is None or not _STAMP.holds():
        _STAMP = RuntimeStamp(package)
    return _STAMP.digest()


def config_hash(workspace: Path, environ: Mapping[str, str], runtime: Path | None = None) -> str:
    """The hash of everything a server's tool set depends on, for runs in ``workspace`` under ``environ``."""
    digest = hashlib.sha256()
    digest.update(runtime_digest(runtime))
    for path in inputs(workspace, environ):
        digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"-")
    for name in HASHED_VARIABLES:
        value = environ.get(name)
        digest.update(f"{name}={value}\n".encode("utf-8", "surrogateescape") if value is not None else b"\0\n")
    return digest.hexdigest()[:32]


__all__ = ["HASHED_VARIABLES", "RuntimeStamp", "config_hash", "inputs", "runtime_digest", "runtime_tree"]
