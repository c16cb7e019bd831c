"""The runtime stamp under the server's threads: each connection's thread hashes the configuration at once."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from codeact.server import confighash

RACY_S = 0.05  # the racy window these tests use, instead of the 2 s a coarse filesystem needs


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime tree standing for this process's package, not stamped yet, older than the racy window."""
    root = tmp_path / "codeact"
    (root / "tools").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "tools" / "files.py").write_text("X = 1\n")
    monkeypatch.setattr(confighash, "_package", lambda: root)
    monkeypatch.setattr(confighash, "_STAMP", None)
    monkeypatch.setattr(confighash, "RACY_NS", int(RACY_S * 1e9))
    time.sleep(2 * RACY_S)
    return root


def test_threads_that_find_the_stamp_stale_take_one_new_stamp(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Path] = []
    take = confighash.RuntimeStamp.__init__

    def stamping(self: confighash.RuntimeStamp, root: Path) -> None:
        made.append(root)
        time.sleep(0.02)  # widens the window in which another thread finds the old stamp stale
        take(self, root)

    monkeypatch.setattr(confighash.RuntimeStamp, "__init__", stamping)
    for round_ in range(3):
        first = confighash.runtime_digest()
        (package / "tools" / f"new{round_}.py").write_text("")  # the tree changed: the next hash walks it again
        time.sleep(2 * RACY_S)
        before = len(made)
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
        assert len(made) - before == 1, "one thread stamps the changed tree; the others find its stamp holds"
        assert len(set(digests)) == 1 and len(digests) == 4
        assert first not in digests, "the file added is in the digest"


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


def test_a_stamp_taken_in_the_tick_of_a_change_is_taken_again(package: Path) -> None:
    """A file rewritten in the same tick of the filesystem's clock keeps its times: a stamp that young is not
    trusted, so such a change is seen at the next run."""
    (package / "tools" / "files.py").write_text("X = 2\n")
    stamp = confighash.RuntimeStamp(package)
    assert not stamp.holds(), "racy: within the window of the newest change"
    time.sleep(2 * RACY_S)
    assert confighash.RuntimeStamp(package).holds(), "past the window a stamp holds"
