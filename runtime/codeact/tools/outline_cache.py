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
from typing import Any, NamedTuple

FORMAT = 4  # the items' shape; a change makes older caches unused
RACY = 2.0  # seconds: a file modified this recently is parsed, never kept


KIND_CODES = {"class": "c", "struct": "s", "interface": "i", "trait": "t", "enum": "e", "type": "y", "module": "m",
              "function": "f", "method": "d", "import": "p", "error": "!"}


class FileItems(NamedTuple):
    """One file's items as kept: a letter a kind (:data:`KIND_CODES`) and the names (``\\0``-joined), enough to
    filter and count without reading the items back, and the items in ``marshal`` form, read only when returned."""

    kinds: str
    names: str | None  # None: still in the cache, read by ``fetch_names``
    blob: bytes | None  # None: still in the cache, read by ``fetch``
    fetch: Callable[[], bytes] | None = None
    fetch_names: Callable[[], str] | None = None

    def all_names(self) -> list[str]:
        names = self.names if self.names is not None else self.fetch_names() if self.fetch_names else ""
        return names.split("\0")

    @classmethod
    def of(cls, items: list[Any]) -> FileItems:
        return cls("".join(KIND_CODES[item[0]] for item in items), "\0".join(item[1] or "" for item in items),
                   marshal.dumps(items))

    def items(self) -> list[Any]:
        blob = self.blob if self.blob is not None else self.fetch() if self.fetch is not None else b"[\0\0\0\0"
        found: list[Any] = marshal.loads(blob)
        return found


def _key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")  # a name that is not UTF-8 is a key too


def _rel(key: bytes) -> str:
    return bytes(key).decode("utf-8", "surrogateescape")


class OutlineCache:
    """The cached items of one workspace: :meth:`lookup` and :meth:`store` by file, :meth:`save` writes what
    changed. Only each file's size, time, kinds and names are read at first; its items when they are returned."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.entries: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, kinds)
        self.names: dict[str, str] | None = None  # path -> names, read when a filter needs them
        self.new: dict[bytes, tuple[int, int, FileItems]] = {}
        self.gone: list[bytes] = []
        self.db: Any = None
        if file is not None and file.is_file():
            try:
                self.db = self._connect()
                self.entries = {_rel(key): (size, mtime, kinds) for key, size, mtime, kinds in
                                self.db.execute("SELECT path, size, mtime, kinds FROM files")}
            except Exception:  # noqa: BLE001 - sqlite3.Error, or no sqlite3 at all: parse instead
                self.close()
                self.entries = {}

    def _connect(self) -> Any:
        import sqlite3

        db = sqlite3.connect(str(self.file), timeout=2.0, isolation_level=None, check_same_thread=False)
        db.execute("CREATE TABLE IF NOT EXISTS files (path BLOB PRIMARY KEY, size INTEGER, mtime INTEGER, "
                   "kinds TEXT, names TEXT, items BLOB) WITHOUT ROWID")
        return db

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

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

    def lookup(self, rel: str, info: os.stat_result) -> FileItems | None:
        """What is kept for ``rel``, if its size and time (``info``, its ``lstat``) are still the same."""
        entry = self.entries.get(rel)
        if entry is None or entry[0] != info.st_size or entry[1] != info.st_mtime_ns:
            return None
        return FileItems(entry[2], None, None, lambda: self._blob(_key(rel)), lambda: self._names(rel))

    def _names(self, rel: str) -> str:
        if self.names is None:
            try:
                self.names = {_rel(key): names for key, names in self.db.execute("SELECT path, names FROM files")}
            except Exception:  # noqa: BLE001 - the cache changed under us: no names, as for a file gone
                self.names = {}
        return self.names.get(rel, "")

    def _blob(self, key: bytes) -> bytes:
        try:
            row = self.db.execute("SELECT items FROM files WHERE path = ?", (key,)).fetchone()
        except Exception:  # noqa: BLE001 - the cache changed under us: nothing, as for a file gone
            row = None
        return bytes(row[0]) if row is not None else marshal.dumps([])

    def store(self, rel: str, info: os.stat_result, found: FileItems) -> None:
        """Keep ``found`` for ``rel`` (``info``: its ``lstat`` when read), unless it changed too recently."""
        if self.file is not None and time.time() - info.st_mtime >= RACY:
            self.new[_key(rel)] = (info.st_size, info.st_mtime_ns, found)

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files not in ``rels`` (an outline of the whole workspace saw every file there is)."""
        self.gone = [_key(rel) for rel in self.entries if rel not in rels]

    def save(self) -> None:
        """Write the files parsed anew and delete the ones gone, in one transaction, in the cache's 0700 folder."""
        self.close()
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
                    db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                                   [(key, size, mtime, found.kinds, found.names, found.blob)
                                    for key, (size, mtime, found) in self.new.items()])
                    db.executemany("DELETE FROM files WHERE path = ?", [(key,) for key in self.gone])
                    db.execute("COMMIT")
                finally:
                    db.close()
            finally:
                os.umask(old)
        except Exception:  # noqa: BLE001 - a cache is an optimisation: the answer never depends on it
            pass
        self.new, self.gone = {}, []


__all__ = ["KIND_CODES", "FileItems", "OutlineCache"]
