"""The configuration a server serves, as one hash: a run whose hash differs gets a fresh server.

Hashed: the runtime's files (path, size, modification and change time: ``copier update`` rewrites them) and
``.codeact/settings.json``; the committed MCP lock and this machine's locks, the MCP configuration files Copilot
reads (``.mcp.json``, ``.github/mcp.json``, ``$COPILOT_HOME/mcp-config.json``, ...), Copilot's trusted folders; the
user's ``config.json`` and ``tools/*.py``; and the ``CODEACT_*`` variables that change what a run is offered. Limits
and ``CODEACT_ALLOW_SECRETS`` are not hashed: they travel with each request.

Checked at every run by what changed, never by reading or walking again: the runtime tree by one ``stat`` per file
and folder (a folder whose entries changed is listed again: the bytecode folders, ``__pycache__``, a server writes
there are no change), each input file by its ``stat`` (inode, size, modification and change time) with its content
digest kept until that changes, and the list of inputs kept for the variables and folder states it was made from.
The server's connection threads hash one at a time (one lock).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import paths

# The variables that change which tools a run is offered, or how they are found.
HASHED_VARIABLES = ("CODEACT_TOOLS", "CODEACT_DISABLE", "CODEACT_CONFIG_DIR", "CODEACT_BACKEND", "CODEACT_PROVIDERS",
                    "COPILOT_ALLOW_ALL", "COPILOT_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def runtime_tree(root: Path) -> Iterable[tuple[str, int, int, int]]:
    """``(path, size, mtime_ns, ctime_ns)`` of every runtime source file under ``root`` (the ``codeact`` package):
    a rewrite that keeps the size and the modification time still changes the change time."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".in", ".json", ".txt")):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                yield path, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def inputs(workspace: Path, environ: Mapping[str, str]) -> list[Path]:
    """The files whose content is hashed for ``workspace`` under ``environ``."""
    from ..core.config import codeact_home
    from ..mcp.cache import cache_path
    from ..mcp.config import config_files
    from ..paths import user_config_dir

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
    one ``stat`` per file and per folder (a file added, removed or renamed changes its folder's mtime), no walk.

    A stamp whose newest time lies within :data:`RACY_NS` of when it was taken is not trusted: a file may change in
    the same tick of the filesystem's clock without changing its times (git's "racy" entries); it is taken again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        taken = time.time_ns()
        self.folders = {folder: (_mtime(folder), _entries(folder)) for folder in _folders(root)}  # first: a change
        self.files = list(runtime_tree(root))  # during the walk changes a folder's mtime or a file's stat
        newest = max([mtime for mtime, _ in self.folders.values()] + [ctime for *_, ctime in self.files])
        self.racy = newest >= taken - RACY_NS
        self._digest: bytes | None = None

    def digest(self) -> bytes:
        """The digest of the entries (made once)."""
        if self._digest is None:
            digest = hashlib.sha256()
            for name, size, mtime, ctime in self.files:
                digest.update(f"{name}\0{size}\0{mtime}\0{ctime}\n".encode("utf-8", "surrogateescape"))
            self._digest = digest.digest()
        return self._digest

    def holds(self) -> bool:
        """Whether no runtime file changed, came or went since the stamp was taken."""
        if self.racy:
            return False
        stat = os.stat
        try:
            for folder, (mtime, entries) in self.folders.items():
                now = stat(folder).st_mtime_ns
                if now != mtime:
                    if _entries(folder) != entries:
                        return False
                    self.folders[folder] = (now, entries)  # only a __pycache__ came or went
            for path, size, mtime, ctime in self.files:
                st = stat(path)
                if st.st_mtime_ns != mtime or st.st_size != size or st.st_ctime_ns != ctime:
                    return False
        except OSError:
            return False
        return True


RACY_NS = 2_000_000_000  # the coarsest clock of a common filesystem (FAT's, HFS+'s 1 s), with a margin


def _folders(root: Path) -> list[str]:
    found = []
    for folder, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.append(folder)
    return found


def _entries(folder: str) -> frozenset[str]:
    """The names in ``folder`` but a bytecode folder (``__pycache__``), which a server writes: no part of the tree."""
    try:
        return frozenset(name for name in os.listdir(folder) if name != "__pycache__")
    except OSError:
        return frozenset()


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


_STAMP: RuntimeStamp | None = None  # this process's runtime, stamped at its first hash (the server: at start)
# The server hashes in every connection's thread: one at a time (one stamp, one table of hashes).
_LOCK = threading.RLock()


@functools.lru_cache(maxsize=1)
def _package() -> Path:
    """This process's ``codeact`` package folder, resolved (once: every run hashes it)."""
    return Path(__file__).resolve().parent.parent


def runtime_digest(runtime: Path | None = None) -> bytes:
    """The digest of the runtime tree (this process's package unless ``runtime`` names another), walked again only
    when a file or folder of it changed since the last walk."""
    global _STAMP
    package = _package()
    if runtime is not None and runtime != package:
        return RuntimeStamp(runtime).digest()
    with _LOCK:
        if _STAMP is None or not _STAMP.holds():
            _STAMP = RuntimeStamp(package)
        return _STAMP.digest()


# What the list of inputs depends on besides the workspace and the files' states: these variables.
_INPUT_VARIABLES = ("HOME", "COPILOT_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CODEACT_CONFIG_DIR")
_KEY_VARIABLES = tuple(dict.fromkeys(HASHED_VARIABLES + _INPUT_VARIABLES))


def _stat_key(path: str) -> tuple[int, int, int, int] | None:
    """What says a file is the same, unchanged: inode, size, modification and change time (a rewrite that keeps
    the mtime changes the ctime); ``None`` when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class _Hashed:
    """One workspace and environment's hash, with what it was made from: the inputs, their stats, and the states
    that decide the list of inputs (whether ``.mcp.json`` exists, the user's tools folder)."""

    def __init__(self, workspace: Path, environ: Mapping[str, str]) -> None:
        from ..paths import user_config_dir

        tools = str(user_config_dir(environ) / "tools")
        self.probes = (str(workspace / ".mcp.json"), tools)
        listed = self._listing()  # first: a change while the inputs are read is seen at the next run
        self.files = [str(path) for path in inputs(workspace, environ)]
        self.stats = (tuple(_stat_key(path) for path in self.files), listed)
        self.runtime = runtime_digest()
        self.value = _combined(self.runtime, self.files, environ)

    def _listing(self) -> tuple[bool, tuple[int, int, int, int] | None]:
        mcp, tools = self.probes
        return os.path.lexists(mcp), _stat_key(tools)

    def holds(self) -> bool:
        """Whether nothing it was made from changed: one ``stat`` per input, two for the listing, the runtime's
        check."""
        stats = (tuple(_stat_key(path) for path in self.files), self._listing())
        return stats == self.stats and runtime_digest() == self.runtime


_HASHED: dict[tuple[object, ...], _Hashed] = {}


def config_hash(workspace: Path, environ: Mapping[str, str], runtime: Path | None = None) -> str:
    """The hash of everything a server's tool set depends on, for runs in ``workspace`` under ``environ``: made
    again only when an input's stat, the listing of inputs, the runtime tree or a variable changed."""
    if runtime is not None and runtime != _package():
        return _combined(runtime_digest(runtime), [str(p) for p in inputs(workspace, environ)], environ)
    key = (str(workspace), *(environ.get(name) for name in _KEY_VARIABLES))
    with _LOCK:
        kept = _HASHED.get(key)
        if kept is None or not kept.holds():
            if len(_HASHED) > 64:  # many environments: start over rather than grow
                _HASHED.clear()
            kept = _HASHED[key] = _Hashed(workspace, environ)
        return kept.value


def _combined(runtime: bytes, files: list[str], environ: Mapping[str, str]) -> str:
    """The hash of the runtime tree's digest, the content of ``files`` and the hashed variables."""
    digest = hashlib.sha256(runtime)
    for path in files:
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
        except OSError:
            digest.update(b"-")
    for name in HASHED_VARIABLES:
        value = environ.get(name)
        digest.update(f"{name}={value}\n".encode("utf-8", "surrogateescape") if value is not None else b"\0\n")
    return digest.hexdigest()[:32]


__all__ = ["HASHED_VARIABLES", "RuntimeStamp", "config_hash", "inputs", "runtime_digest", "runtime_tree"]
