"""The runtime stamp under the server's threads: each connection's thread hashes the configuration at once."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from codeact.server import confighash

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the runtime stamp uses Linux inotify")


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime tree standing for this process's package, not stamped yet."""
    root = tmp_path / "codeact"
    (root / "tools").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "tools" / "files.py").write_text("X = 1\n")
    monkeypatch.setattr(confighash, "_package", lambda: root)
    monkeypatch.setattr(confighash, "_STAMP", None)
    return root


def test_threads_that_find_the_stamp_stale_close_its_watch_once(package: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    opened: set[int] = set()  # the watches' descriptors open now
    twice: list[int] = []
    start, close = confighash._FolderWatch.__init__, os.close

    def watch(self: confighash._FolderWatch, fd: int) -> None:
        opened.add(fd)
        start(self, fd)

    def closing(fd: int) -> None:
        if fd in opened:
            opened.discard(fd)
            time.sleep(0.02)  # widens the window in which another thread finds the watch still open
        elif fd in seen:
            twice.append(fd)  # a watch's number closed again: whatever holds that number now loses it
        close(fd)

    seen: set[int] = set()
    monkeypatch.setattr(confighash._FolderWatch, "__init__", watch)
    monkeypatch.setattr(os, "close", closing)
    for round_ in range(3):
        confighash.runtime_digest()
        seen |= opened
        (package / "tools" / f"new{round_}.py").write_text("")  # the tree changed: the next hash walks it again
        barrier = threading.Barrier(4)
        digests: list[bytes] = []

        def hash_it() -> None:
            barrier.wait()
            digests.append(confighash.runtime_digest())

        threads = [threading.Thread(target=hash_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen |= opened
        assert not twice, f"a stale watch's descriptor {twice} was closed by two threads"
        assert len(set(digests)) == 1 and len(digests) == 4
    assert len(opened) == 1, "one watch open: the current stamp's"


def test_bytecode_written_into_the_tree_is_not_a_change(package: Path) -> None:
    confighash.runtime_digest()
    stamp = confighash._STAMP
    assert stamp is not None and stamp.holds()
    (package / "tools" / "__pycache__").mkdir()  # a server importing the tools writes their bytecode
    (package / "tools" / "__pycache__" / "files.cpython-312.pyc").write_bytes(b"")
    assert stamp.holds(), "a __pycache__ folder is no part of the runtime tree"
    (package / "tools" / "grep.py").write_text("")
    assert not stamp.holds(), "a source file added is"
    assert not stamp.holds(), "and stays a change"
