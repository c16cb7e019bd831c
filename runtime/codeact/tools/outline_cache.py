"""What ``outline`` parsed before, by file: a workspace's items kept in the user's cache folder.

Parsing is most of an outline's cost, and files rarely change between runs. Each file's items are kept under its
workspace-relative path with its stamp (size, modification and change times in ns, inode, as ``lstat`` gives them:
git's own test of a changed file) and reused while the stamp is the same. A file modified less than two seconds ago
is not kept (a write within the clock's step could leave the same time). The cache is one SQLite database per
workspace and Python version in ``$XDG_CACHE_HOME/codeact/outline/`` (0700, outside the workspace), in three tables
so that a run reads only what it needs: ``stamps`` (the stamp and a letter a kind: read whole at the start, small),
``names`` (read whole only for a ``name=`` filter) and ``items`` (read only for the files returned, each checked
against the stamp it was validated with). A run writes only the files it parsed anew and deletes only those gone,
in one transaction (SQLite keeps two runs writing at once apart). Items are kept in ``marshal`` form (plain data,
read back fast). A cache that cannot be read or written is ignored: the files are parsed.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import marshal
import os
import sys
import time
from collections.abc import Iterable, Mapping
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

FORMAT = 6  # the tables' and items' shape; a change makes older caches unused
RACY = 2.0  # seconds: a file modified this recently is parsed, never kept
BATCH = 500  # paths a query of items names (SQLite's variable limit is 999 in old builds)

KIND_CODES = {"class": "c", "struct": "s", "interface": "i", "trait": "t", "enum": "e", "type": "y", "module": "m",
              "function": "f", "method": "d", "import": "p", "error": "!"}
Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
_SCHEMA = ("CREATE TABLE IF NOT EXISTS stamps (path PRIMARY KEY, size INTEGER, mtime INTEGER, ctime INTEGER, "
           "ino INTEGER, kinds TEXT) WITHOUT ROWID",
           "CREATE TABLE IF NOT EXISTS names (path PRIMARY KEY, names TEXT) WITHOUT ROWID",
           "CREATE TABLE IF NOT EXISTS items (path PRIMARY KEY, size INTEGER, mtime INTEGER, ctime INTEGER, "
           "ino INTEGER, items BLOB)")


def stamp(info: os.stat_result) -> Stamp:
    """What tells a file changed: its size, modification and change times and inode."""
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


class FileItems(NamedTuple):
    """One file's items as parsed: a letter a kind (:data:`KIND_CODES`), the names (``\\0``-joined) and the items
    in ``marshal`` form."""

    kinds: str
    names: str
    blob: bytes

    @classmethod
    def of(cls, items: list[Any]) -> FileItems:
        return cls("".join(KIND_CODES[item[0]] for item in items), "\0".join(item[1] or "" for item in items),
                   marshal.dumps(items))


def _key(rel: str) -> str | bytes:
    """A path as kept: TEXT (read back as ``str`` at no cost), or a BLOB of its bytes for a name that is not UTF-8
    (``surrogateescape``)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape")
    return rel


def _rel(key: str | bytes) -> str:
    return key if isinstance(key, str) else bytes(key).decode("utf-8", "surrogateescape")


def _has_blobs(rows: list[Any]) -> bool:
    return any(not isinstance(row[0], str) for row in rows)




class OutlineCache:
    """The cached items of one workspace: :attr:`stamps` (and :attr:`names` when asked for) read at the start,
    :meth:`items` by file, :meth:`store` and :meth:`keep_only` to change it, :meth:`save` writes what changed."""

    def __init__(self, file: Path | None, with_names: bool = False) -> None:
        self.file = file
        # path -> its row: (path, size, mtime, ctime, ino, kinds); row[1:5] is the stamp it was kept with
        self.stamps: dict[str, tuple[Any, ...]] = {}
        self.names: dict[str, str] = {}  # path -> names, read only ``with_names``
        self.new: dict[str, tuple[Stamp, FileItems]] = {}
        self.gone: list[str] = []
        self.db: Any = None
        if file is not None and file.is_file():
            try:
                self.db = self._connect()
                self.db.execute("BEGIN")  # stamps and names from one snapshot
                try:
                    rows = self.db.execute("SELECT path, size, mtime, ctime, ino, kinds FROM stamps").fetchall()
                    paths = map(itemgetter(0), rows)  # a dict made in C: this is most of a cached outline
                    self.stamps = dict(zip(map(_rel, paths) if _has_blobs(rows) else paths, rows))
                    if with_names:
                        named = self.db.execute("SELECT path, names FROM names").fetchall()
                        self.names = {_rel(key): names for key, names in named} if _has_blobs(named) else dict(named)
                finally:
                    self.db.execute("COMMIT")
            except Exception:  # noqa: BLE001 - sqlite3.Error, or no sqlite3 at all: parse instead
                self.close()
                self.stamps, self.names = {}, {}

    def _connect(self) -> Any:
        import sqlite3

        db = sqlite3.connect(str(self.file), timeout=2.0, isolation_level=None, check_same_thread=False)
        for statement in _SCHEMA:
            db.execute(statement)
        return db

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    @classmethod
    def for_workspace(cls, root: Path, environ: Mapping[str, str] | None, with_names: bool = False) -> OutlineCache:
        from ..paths import codeact_cache_dir

        try:
            folder = codeact_cache_dir(environ or None) / "outline"
        except (RuntimeError, KeyError, OSError):
            return cls(None)
        if folder.is_relative_to(root):
            return cls(None)  # never write into the workspace
        import hashlib  # here: OpenSSL costs a few ms to load, and most runs never outline

        key = hashlib.sha256(f"{root}\0{sys.version_info[:2]}\0{FORMAT}".encode("utf-8", "surrogateescape"))
        return cls(folder / f"{key.hexdigest()[:24]}.sqlite", with_names)

    def items(self, wanted: Iterable[tuple[str, Stamp]]) -> dict[str, bytes]:
        """The kept items (``marshal`` form) of these files, each only if kept with that stamp (a run that wrote
        since may have kept a newer version: the caller parses those)."""
        found: dict[str, bytes] = {}
        todo = list(wanted)
        for start in range(0, len(todo) if self.db is not None else 0, BATCH):
            part = {_key(rel): (rel, kept) for rel, kept in todo[start:start + BATCH]}
            try:
                rows = self.db.execute(f"SELECT path, size, mtime, ctime, ino, items FROM items WHERE path IN "
                                       f"({','.join('?' * len(part))})", list(part)).fetchall()
            except Exception:  # noqa: BLE001 - the cache changed under us: those files are parsed
                continue
            for key, size, mtime, ctime, ino, blob in rows:
                rel, kept = part[key]
                if kept == (size, mtime, ctime, ino):
                    found[rel] = blob
        return found

    def store(self, rel: str, info: os.stat_result, found: FileItems) -> None:
        """Keep ``found`` for ``rel`` (``info``: its ``lstat`` when read), unless it changed too recently."""
        if self.file is not None and time.time() - info.st_mtime >= RACY:
            self.new[rel] = (stamp(info), found)

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files not in ``rels`` (an outline of the whole workspace saw every file there is)."""
        self.gone = [rel for rel in self.stamps if rel not in rels]

    def save(self) -> None:
        """Write the files parsed anew and delete the ones gone, in one transaction, in the cache's 0700 folder."""
        self.close()
        if self.file is None or not (self.new or self.gone):
            return
        folder = self.file.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)
            # created 0600 here, not under a umask: that is the whole process's, and the warm server's other runs
            # create the user's files meanwhile; SQLite gives its journal the database's mode
            os.close(os.open(self.file, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                             | getattr(os, "O_CLOEXEC", 0), 0o600))
            db = self._connect()
            try:
                db.execute("BEGIN IMMEDIATE")
                new = self.new.items()
                db.executemany("INSERT OR REPLACE INTO stamps VALUES (?, ?, ?, ?, ?, ?)",
                               [(_key(rel), *kept, found.kinds) for rel, (kept, found) in new])
                db.executemany("INSERT OR REPLACE INTO names VALUES (?, ?)",
                               [(_key(rel), found.names) for rel, (_, found) in new])
                db.executemany("INSERT OR REPLACE INTO items VALUES (?, ?, ?, ?, ?, ?)",
                               [(_key(rel), *kept, found.blob) for rel, (kept, found) in new])
                for table in ("stamps", "names", "items"):
                    db.executemany(f"DELETE FROM {table} WHERE path = ?", [(_key(rel),) for rel in self.gone])
                db.execute("COMMIT")
            finally:
                db.close()
        except Exception:  # noqa: BLE001 - a cache is an optimisation: the answer never depends on it
            pass
        self.new, self.gone = {}, []


__all__ = ["KIND_CODES", "FileItems", "OutlineCache", "Stamp", "stamp"]
