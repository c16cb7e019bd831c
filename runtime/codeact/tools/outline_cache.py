"""What ``outline`` parsed before, by file: a workspace's items kept in the user's cache folder.

Parsing is most of an outline's cost, and files rarely change between runs. Each file's items are kept under its
workspace-relative path with its size and modification time (ns) and reused while both are the same. A file changed
less than two seconds ago is not kept (a write within the clock's step could leave the same time). The cache is one
SQLite database per workspace and Python version in ``$XDG_CACHE_HOME/codeact/outline/`` (0700, outside the
workspace): a run writes only the files it parsed anew and deletes only those gone (SQLite's transactions keep two
runs writing at once apart). Items are kept in ``marshal`` form (plain data, read back fast). A cache that cannot be
read or written is ignored: the files are parsed.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import marshal
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FORMAT = 3  # the items' shape; a change makes older caches unused
RACY = 2.0  # seconds: a file modified this recently is parsed, never kept


def _key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")  # a name that is not UTF-8 is a key too


class OutlineCache:
    """The cached items of one workspace; :meth:`items` parses what is missing, :meth:`save` writes what changed."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.entries: dict[bytes, tuple[int, int, bytes]] = {}  # key -> (size, mtime_ns, marshalled items)
        self.new: dict[bytes, tuple[int, int, bytes]] = {}
        self.gone: list[bytes] = []
        if file is not None and file.is_file():
            try:
                db = self._connect()
                try:
                    self.entries = {key: (size, mtime, blob) for key, size, mtime, blob in
                                    db.execute("SELECT path, size, mtime, items FROM files")}
                finally:
                    db.close()
            except Exception:  # noqa: BLE001 - sqlite3.Error, or no sqlite3 at all: parse instead
                self.entries = {}

    def _connect(self) -> Any:
        import sqlite3

        db = sqlite3.connect(str(self.file), timeout=2.0, isolation_level=None)
        db.execute("CREATE TABLE IF NOT EXISTS files (path BLOB PRIMARY KEY, size INTEGER, mtime INTEGER, "
                   "items BLOB) WITHOUT ROWID")
        return db

    @classmethod
    def for_workspace(cls, root: Path, environ: Mapping[str, str] | None) -> OutlineCache:
        from ..paths import codeact_cache_dir

        try:
            folder = codeact_cache_dir(environ or None) / "outline"
        except (RuntimeError, KeyError, OSError):
            return cls(None)
        if folder.is_relative_to(root):
            return cls(None)  # never write into the workspace
        import hashlib  # here: OpenSSL costs a few ms to load, and most runs never outline

        key = hashlib.sha256(f"{root}\0{sys.version_info[:2]}\0{FORMAT}".encode("utf-8", "surrogateescape"))
        return cls(folder / f"{key.hexdigest()[:24]}.sqlite")

    def fresh(self, file: Path, rel: str) -> bool:
        """Whether the items kept for ``file`` are still its own."""
        entry = self.entries.get(_key(rel))
        if entry is None:
            return False
        try:
            info = os.lstat(file)
        except OSError:
            return False
        return entry[0] == info.st_size and entry[1] == info.st_mtime_ns

    def items(self, file: Path, rel: str, parse: Callable[[Path, str], list[Any]]) -> list[Any]:
        """The items ``parse`` gives for ``file`` (reported as ``rel``): kept ones while its size and time are the
        same."""
        try:
            info = os.lstat(file)
        except OSError:
            return parse(file, rel)
        key = _key(rel)
        entry = self.entries.get(key)
        if entry is not None and entry[0] == info.st_size and entry[1] == info.st_mtime_ns:
            kept: list[Any] = marshal.loads(entry[2])
            return kept
        found = parse(file, rel)
        if self.file is not None and time.time() - info.st_mtime >= RACY:
            self.new[key] = (info.st_size, info.st_mtime_ns, marshal.dumps(found))
        return found

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files not in ``rels`` (an outline of the whole workspace saw every file there is)."""
        wanted = {_key(rel) for rel in rels}
        self.gone = [key for key in self.entries if key not in wanted]

    def save(self) -> None:
        """Write the files parsed anew and delete the ones gone, in one transaction, in the cache's 0700 folder."""
        if self.file is None or not (self.new or self.gone):
            return
        folder = self.file.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)
            old = os.umask(0o077)  # the database and its journal: 0600
            try:
                db = self._connect()
                try:
                    db.execute("BEGIN IMMEDIATE")
                    db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                                   [(key, *entry) for key, entry in self.new.items()])
                    db.executemany("DELETE FROM files WHERE path = ?", [(key,) for key in self.gone])
                    db.execute("COMMIT")
                finally:
                    db.close()
            finally:
                os.umask(old)
        except Exception:  # noqa: BLE001 - a cache is an optimisation: the answer never depends on it
            pass
        self.new, self.gone = {}, []


__all__ = ["OutlineCache"]
