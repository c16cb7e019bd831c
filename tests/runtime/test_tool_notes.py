"""Issue 24 rule 1 through the stamped launcher: a tool that returns less than everything says so in a ``note:``
line (stderr in plain mode, ``notes`` in ``--json``) with the real total, and a count question on a repository of
realistic size gets the true count. Issue 25 rule 1: a pattern only Python's ``re`` can run ends by the deadline."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from codeact.core.limits import Limits
from tests.conftest import git

CLASSES_PER_FILE, FILES = 30, 300  # 9,000 class lines, ~0.9 MiB of results: sqlalchemy's size (9,022)


def _module(i: int) -> str:
    body = "".join(f"class Thing{i}x{k}(Base{k % 3}):\n    \"\"\"Doc.\"\"\"\n    value = {k}\n\n"
                   for k in range(CLASSES_PER_FILE))
    return f"import os\n\n\n{body}def helper_{i}():\n    return os.sep\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, template_src: Path) -> Path:
    from copier import run_copy

    from tests.conftest import make_repo

    files = {f"pkg/sub{i % 10}/mod{i:03d}.py": _module(i) for i in range(FILES)}
    files["data/big.txt"] = "".join(f"line {n}\n" for n in range(1, 251))
    root = make_repo(tmp_path_factory.mktemp("notes") / "repo", files)
    run_copy(str(template_src), root, data={}, defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True,
             skip_tasks=True, overwrite=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "codeact")
    return root


def launch(project: Path, venv_dir: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(project / ".codeact/bin/codeact"), *args], cwd=project, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "CODEACT_VENV": str(venv_dir), **(env or {})})


def test_a_count_on_a_real_sized_repository_is_true_and_a_cut_names_the_total(project, venv_dir):
    count = 'len(grep(pattern=r"^\\s*class\\s", glob="*.py"))'
    done = launch(project, venv_dir, "run", "--code", count)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{CLASSES_PER_FILE * FILES}\n" and "note:" not in done.stderr  # whole: no note
    # past max_results (the old default of 1,000) and past the result limit: the real total is said
    capped = launch(project, venv_dir, "run", "--json", "--code", count.replace('"*.py"', '"*.py", max_results=1000'))
    data = json.loads(capped.stdout)
    assert data["result"] == 1000
    assert data["notes"] == ["grep(): returned 1,000 of 9,000 matching lines, the first in path order "
                             "(max_results=1000; raise max_results= or narrow pattern, glob= or path=)"]
    every = 'len(grep(pattern="", glob="*.py"))'  # every line: 37,500, far past 1 MiB
    lines = sum(_module(i).count("\n") for i in range(FILES))
    plain = launch(project, venv_dir, "run", "--code", every)
    assert plain.returncode == 0, plain.stderr
    kept = int(plain.stdout)
    assert 0 < kept < lines
    assert (f"note: grep(): returned {kept:,} of {lines:,} matching lines, the first in path order (the rest pass "
            f"the {Limits().tool_result:,}-byte tool-result limit; narrow pattern, glob= or path= (one folder at a "
            "time))\n") in plain.stderr


def test_glob_outline_sql_and_view_say_what_they_did_not_return(project, venv_dir):
    program = ("files = glob(pattern='*.py')\n"
               "classes = outline(path='pkg', kind='class', name=r'Thing1\\dx0')\n"
               "rows = sql(query='WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) "
               "SELECT x FROM c')\n"
               "[len(files), len(classes), classes[0]['bases'], len(rows), type(rows[-1]).__name__]")
    done = launch(project, venv_dir, "run", "--json", "--code", program, env={"CODEACT_TOOL_RESULT": "5000"})
    data = json.loads(done.stdout)
    assert data["ok"], data
    files, classes, bases, rows, last = data["result"]
    assert 0 < files < FILES and bases == ["Base0"] and 0 < rows < 5000 and last == "dict"
    # Thing10x0..Thing19x0, filtered on the host: whole, though the 300 files' list passes the limit
    assert classes == 10
    assert data["notes"] == [
        f"glob(): returned {files} of {FILES} files, the first in path order (the rest pass the 5,000-byte "
        "tool-result limit); narrow pattern= or path= (one folder at a time)",
        f"sql(): returned {rows:,} of 5,000 rows (the 5,000-byte tool-result limit); add LIMIT/OFFSET to page, "
        "select fewer columns, or aggregate in SQL (COUNT, GROUP BY)"]


def test_view_past_the_end_raises_with_the_line_count(project, venv_dir):
    done = launch(project, venv_dir, "run", "--code", 'view(path="data/big.txt", view_range=[500, 510])')
    assert done.returncode == 1
    assert ("IndexError (line 1): view_range [500, 510] starts past the end of data/big.txt, which has 250 lines"
            in done.stderr), done.stderr
    paging = ("n, first = 0, 1\nwhile True:\n    page = view(path='data/big.txt', view_range=[first, first + 99])\n"
              "    n += len(page.splitlines())\n    if len(page.splitlines()) < 100:\n        break\n"
              "    first += 100\nn")
    done = launch(project, venv_dir, "run", "--code", paging)
    assert done.returncode == 0 and done.stdout == "250\n", done.stderr


def test_a_pattern_only_python_can_run_is_stopped_at_the_deadline_in_process(project, venv_dir):
    (project / "data" / "a.txt").write_text("a" * 36 + "!\n")
    try:
        started = time.monotonic()
        done = launch(project, venv_dir, "run", "--timeout", "5", "--code",
                      'grep(pattern=r"(?=a)(a+)+$", path="data")')
        assert time.monotonic() - started < 5 + 2 + 1  # the launcher's own start on a loaded machine
        assert done.returncode == 1 and "TimeoutError (line 1): grep() was stopped at the run's deadline" in done.stderr
        quick = launch(project, venv_dir, "run", "--code", 'len(grep(pattern=r"(?<=line )24\\d$", path="data"))')
        assert quick.stdout == "10\n", quick.stderr
    finally:
        (project / "data" / "a.txt").unlink()


def test_off_the_main_thread_pythons_re_runs_in_a_process_the_deadline_kills(tmp_path, monkeypatch):
    """A run on a thread (the warm server's) cannot be interrupted by SIGALRM: a pattern ripgrep refuses, and the
    sorted re-run after a flood of matches, search in the regex worker, killed at the deadline."""
    import threading

    from codeact.core.boundary import Workspace
    from codeact.core.tool import ToolContext
    from codeact.tools import search
    from codeact.tools.search import rg_grep

    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.txt").write_text("a" * 30 + "!\n" + "aaa\n" * 3)  # matches follow the line Python chokes on
    (root / "b.txt").write_text("import os\n" * 3)
    monkeypatch.setattr(rg_grep, "FLOOD_FACTOR", 1)
    monkeypatch.setattr(rg_grep, "FLOOD_MIN", 1)  # ripgrep runs (a+)+$ at once; Python backtracks on it for ever
    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(timeout=2))
    outcomes: dict[str, object] = {}

    def call(name: str, **kwargs: object) -> None:
        started = time.monotonic()
        try:
            outcomes[name] = search.grep(ctx, **kwargs)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - the outcome is checked below
            outcomes[name] = exc
        outcomes[name + " s"] = time.monotonic() - started

    for name, kwargs in (("flood", {"pattern": r"(a+)+$", "max_results": 1}),
                         ("look-around", {"pattern": r"(?=a)(a+)+$"}),
                         ("fine", {"pattern": r"(?<=import )os$", "max_results": 1})):
        worker = threading.Thread(target=call, args=(name,), kwargs=kwargs, daemon=True)
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), f"{name}: the search held its thread past the deadline"
    for name in ("flood", "look-around"):
        assert "stopped at the run's deadline while searching files" in str(outcomes[name])
        assert outcomes[name + " s"] < 2 + 2  # type: ignore[operator]
    assert outcomes["fine"] == [{"path": "b.txt", "line": 1, "text": "import os"}]


def test_previous_output_past_the_limit_names_the_line_to_read_on(project, venv_dir):
    import re

    printed = launch(project, venv_dir, "run", "--code", "for i in range(3000):\n    print(f'row {i:05d}')")
    assert printed.returncode == 0, printed.stderr
    run_id = re.search(r'previous_output\(run="([^"]+)"', printed.stdout + printed.stderr)
    assert run_id, printed.stdout[-300:]
    again = launch(project, venv_dir, "run", "--json", "--code",
                   f'text = previous_output(run="{run_id[1]}")\n[len(text.splitlines()), text.splitlines()[-1]]',
                   env={"CODEACT_TOOL_RESULT": "2000"})
    data = json.loads(again.stdout)
    assert data["ok"], data
    kept, last = data["result"]
    assert kept == 2000 // len("row 00000\n") and last == f"row {kept - 1:05d}"  # whole lines only
    assert data["notes"] == [f"previous_output(): run {run_id[1]}: returned lines 1-{kept} of 1-3000 (the 2,000-byte "
                             f"tool-result limit); read on with previous_output(run={run_id[1]!r}, "
                             f"first_line={kept + 1})"]


def test_bash_says_which_stream_it_cut(tmp_path):
    from codeact.core.config import Settings
    from codeact.runner import run

    (tmp_path / ".git").mkdir()
    code = 'r = bash(command="head -c 3000 /dev/zero | tr \\"\\\\0\\" z; echo err >&2")\n[len(r["stdout"]), r["stderr"]]'
    result = run(code, workspace=tmp_path, settings=Settings(tools=("bash",)), limits=Limits(tool_result=1000),
                 backend="monty")
    assert result.ok, result.error
    assert result.notes == ["bash(): stdout of 'head -c 3000 /dev/zero | tr \"\\\\0\" z; echo err >&2': returned the "
                            "first 1,000 of 3,000 bytes (the tool-result limit); filter in the command (grep, head, "
                            "tail, wc -l) or write to a file and view it by view_range"]


def test_view_reads_on_when_one_unbuffered_read_returns_less():
    """view reads a whole file unbuffered; a read that returns less than asked (a pipe, /proc) is read on, so
    nothing is lost without a note."""
    import io

    from codeact.tools.files import _read_up_to

    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data = data

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            piece, self.data = self.data[:min(size, 3)], self.data[min(size, 3):]
            return piece

    assert _read_up_to(Trickle(b"0123456789"), 8) == b"01234567"
    assert _read_up_to(Trickle(b"0123456789"), 100) == b"0123456789"
    assert _read_up_to(Trickle(b""), 5) == b""
