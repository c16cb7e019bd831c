"""What ``outline`` parsed before, by file: a workspace's items kept in the user's cache folder.

Parsing is most of an outline's cost (a large repository: seconds), and files rarely change between runs. Each
file's items are kept under its workspace-relative path with its size and modification time (ns) and reused while
both are the same. A file changed less than two seconds ago is not kept (a write within the clock's step could
leave the same time). The cache lies in ``$XDG_CACHE_HOME/codeact/outline/`` (0700, outside the workspace), one JSON
file per workspace and Python version, replaced whole (``os.replace``), so two runs writing at once leave one
complete file; a cache that cannot be read or written is ignored (the files are parsed).
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FORMAT = 2  # the items' shape; a change makes older caches unused
RACY = 2.0  # seconds: a file modified this recently is parsed, never kept


class OutlineCache:
    """The cached items of one workspace; :meth:`items` parses what is missing, :meth:`save` writes it back."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.entries: dict[str, list[Any]] = {}
        self.changed = False
        if file is not None:
            try:
                data = json.loads(file.read_bytes())
                if isinstance(data, dict) and data.get("format") == FORMAT:
                    self.entries = data.get("files") or {}
            except (OSError, ValueError):
                pass

    @classmethod
    def for_workspace(cls, root: Path, environ: Mapping[str, str] | None) -> OutlineCache:
        from ..paths import codeact_cache_dir

        try:
            folder = codeact_cache_dir(environ or None) / "outline"
        except (RuntimeError, KeyError, OSError):
            return cls(None)
        if folder.is_relative_to(root):
            return cls(None)  # never write into the workspace
        import hashlib  # here: OpenSSL costs ~3 ms to load, and most runs never outline

        key = hashlib.sha256(f"{root}\0{sys.version_info[:2]}".encode()).hexdigest()[:24]
        return cls(folder / f"{key}.json")

    def fresh(self, file: Path, rel: str) -> bool:
        """Whether the items kept for ``file`` are still its own."""
        entry = self.entries.get(rel)
        if entry is None:
            return False
        try:
            info = os.lstat(file)
        except OSError:
            return False
        return bool(entry[0] == info.st_size and entry[1] == info.st_mtime_ns)

    def items(self, file: Path, rel: str, parse: Callable[[Path, str], list[dict[str, Any]]]
              ) -> list[dict[str, Any]]:
        """The items ``parse`` gives for ``file`` (reported as ``rel``): kept ones while its size and time are the
        same."""
        try:
            info = os.lstat(file)
        except OSError:
            return parse(file, rel)
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == info.st_size and entry[1] == info.st_mtime_ns:
            kept: list[dict[str, Any]] = entry[2]
            return kept
        found = parse(file, rel)
        if self.file is not None and time.time() - info.st_mtime >= RACY:
            self.entries[rel] = [info.st_size, info.st_mtime_ns, found]
            self.changed = True
        return found

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files not in ``rels`` (an outline of the whole workspace saw every file there is)."""
        gone = [rel for rel in self.entries if rel not in rels]
        for rel in gone:
            del self.entries[rel]
        self.changed = self.changed or bool(gone)

    def save(self) -> None:
        """Write the cache back if it changed: a whole new file in the cache's 0700 folder, then renamed over."""
        if self.file is None or not self.changed:
            return
        import tempfile

        folder = self.file.parent
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)
            fd, temp = tempfile.mkstemp(dir=folder, prefix=".outline-", suffix=".tmp")  # 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"format": FORMAT, "files": self.entries}, out, separators=(",", ":"))
                os.replace(temp, self.file)
            except BaseException:
                os.unlink(temp)
                raise
        except OSError:
            pass  # a cache is an optimisation: the answer never depends on it
        self.changed = False


__all__ = ["OutlineCache"]
