"""Issue 25 rule 1 on the warm server, through the stamped launcher: a grep pattern only Python's ``re`` can run
(ripgrep refuses look-arounds; the wheel has no PCRE2) searches in a worker process killed at the run's deadline, so
it cannot hold the server's interpreter: the run ends by ``--timeout`` + 2 s and the next run is served at once."""
from __future__ import annotations

import json
import time

from test_server import Repo, repo  # noqa: F401 - the fixture

BACKTRACKS = 'grep(pattern=r"(?=a)(a+)+$", glob="*.txt")'  # exponential on 36 a's and a "!"


def test_a_backtracking_pattern_cannot_hold_the_server(repo: Repo) -> None:  # noqa: F811
    (repo.root / "a.txt").write_text("a" * 36 + "!\n")
    (repo.root / "b.txt").write_text("import os\nfrom os import path\n")
    warm = repo("run", "--code", "print(1)")
    assert warm.returncode == 0, warm.stderr
    pid = repo.server_pid()
    assert pid is not None
    started = time.monotonic()
    done = repo("run", "--timeout", "5", "--code", BACKTRACKS)
    assert time.monotonic() - started <= 5 + 2
    assert done.returncode == 1
    assert "TimeoutError (line 1): grep() was stopped at the run's deadline while searching files" in done.stderr
    started = time.monotonic()
    after = repo("run", "--json", "--code", 'grep(pattern=r"(?<=import )os$", glob="*.txt")')
    assert time.monotonic() - started < 2
    assert json.loads(after.stdout)["result"] == [{"path": "b.txt", "line": 1, "text": "import os"}]
    assert repo.server_pid() == pid, "the same server answered: nothing held it"
