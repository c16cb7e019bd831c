"""outline's cache (issue 42 item 2): the cached answer is the uncached one, on real sources of every language; the
cache is written incrementally, survives a run stopped at its deadline, and never answers for a file that changed
(same size and time restored, another run writing meanwhile, a file deleted)."""
from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from codeact.core import notices
from codeact.core.limits import Deadline, Limits
from codeact.errors import ToolError
from codeact.tools import outline as outline_mod
from codeact.tools import proc
from codeact.tools.outline import outline
from codeact.tools.outline_cache import OutlineCache

FIXTURES = Path(__file__).with_name("fixtures") / "outline"
RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "codeact"
OLD = time.time() - 600  # past the cache's racy window


def _real_tree(root: Path) -> Path:
    """Real sources: this runtime (Python), jinja2 from the venv, and the outline fixture of each language, several
    times over in folders (enough for the worker processes), and two files that do not parse; all dated past the
    racy window."""
    import jinja2

    shutil.copytree(RUNTIME, root / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(Path(jinja2.__file__).parent, root / "jinja2", ignore=shutil.ignore_patterns("__pycache__"))
    for copy in range(8):
        shutil.copytree(FIXTURES, root / "langs" / f"c{copy}")
    (root / "broken").mkdir()
    (root / "broken" / "bad.py").write_text("def f(:\n    pass\n")
    (root / "broken" / "bad.go").write_text("package p\n\nfunc F( {\n}\n\nfunc G() {}\n")
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (OLD, OLD))
    return root


@pytest.fixture
def real(tmp_path: Path) -> Path:
    return _real_tree(tmp_path / "ws")


def _ctx(make_ctx, root: Path, cache: Path, **limits: int):
    return make_ctx(root, limits=Limits(**limits), environ={"XDG_CACHE_HOME": str(cache), "HOME": str(cache)})


def _cache_file(cache: Path) -> Path:
    (found,) = (cache / "codeact" / "outline").glob("*.sqlite")
    return found


CALLS = [{}, {"kind": "method"}, {"kind": "error"}, {"name": r"_\w*"}, {"kind": "class", "name": r"[A-Z]\w*"},
         {"glob": "*.{go,rs,ts}"}, {"path": "jinja2"}, {"path": "langs/c3/a.kt"}]


@pytest.mark.parametrize("call", CALLS, ids=lambda call: ",".join(f"{k}={v}" for k, v in call.items()) or "all")
def test_cached_answers_equal_uncached_ones_on_real_sources(real, tmp_path, make_ctx, call):
    """Each call's answer and notes from a cold cache, from the warm cache, and with no cache at all are the same
    (the tool-result limit small enough to cut the whole-workspace answer)."""
    answers = []
    for cache in ("cold", "cold", "none"):
        # "none": a cache folder in the workspace, never used
        ctx = _ctx(make_ctx, real, real / "inside" if cache == "none" else tmp_path / cache, tool_result=200_000)
        collector = notices.Notes()
        previous = collector.activate()
        try:
            answers.append((outline(ctx, **call), collector.shown()))
        finally:
            notices.restore(previous)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0], call
    if not call:
        assert any("returned" in note for note in answers[0][1])  # the cut was reached, and said
        assert not any(item["path"].startswith("runtime/") for item in answers[0][0])  # cut before runtime/
    assert not (real / "inside").exists()


def test_workers_and_the_cache_agree_with_parsing_here(real, tmp_path, make_ctx, monkeypatch):
    here = outline(_ctx(make_ctx, real, tmp_path / "here"), kind="method")
    monkeypatch.setattr(outline_mod, "PARALLEL_MIN", 2)
    monkeypatch.setattr(outline_mod.os, "cpu_count", lambda: 3)
    ctx = _ctx(make_ctx, real, tmp_path / "workers")
    assert outline(ctx, kind="method") == here
    with sqlite3.connect(_cache_file(tmp_path / "workers")) as db:
        assert db.execute("SELECT count(*) FROM stamps").fetchone()[0] > 100
    assert outline(ctx, kind="method") == here


def test_what_workers_sent_before_the_deadline_is_kept(real, tmp_path, make_ctx, monkeypatch):
    """A worker stopped at the deadline after sending its batches: the run fails with the deadline's error, the
    files that arrived are in the cache, and the same call again answers as an uncached run does."""
    monkeypatch.setattr(outline_mod, "PARALLEL_MIN", 2)
    monkeypatch.setattr(outline_mod.os, "cpu_count", lambda: 2)
    expected = outline(_ctx(make_ctx, real, tmp_path / "reference"))
    real_iter = proc.Child.__iter__
    stopped: list[int] = []

    def then_stopped(self):
        yield from real_iter(self)
        if self.tool == "outline" and not stopped:  # the first worker to finish is "killed" after its output
            stopped.append(1)
            raise self.deadline.stopped(self.tool, self.detail)

    monkeypatch.setattr(proc.Child, "__iter__", then_stopped)
    ctx = _ctx(make_ctx, real, tmp_path / "cache")
    with pytest.raises(ToolError, match=r"stopped at the run's deadline while parsing \d+ files \(those parsed by "
                                        r"then are kept"):
        outline(ctx)
    with sqlite3.connect(_cache_file(tmp_path / "cache")) as db:
        kept = db.execute("SELECT count(*) FROM stamps").fetchone()[0]
    assert kept > 100
    monkeypatch.setattr(proc.Child, "__iter__", real_iter)
    assert outline(ctx) == expected


def _parsed_during(monkeypatch, call) -> list[str]:
    parsed: list[str] = []
    real = outline_mod.outline_file

    def counting(file, rel, bounded=False):
        parsed.append(rel)
        return real(file, rel, bounded)

    monkeypatch.setattr(outline_mod, "outline_file", counting)
    call()
    monkeypatch.setattr(outline_mod, "outline_file", real)
    return parsed


def test_a_file_rewritten_with_its_size_and_time_restored_is_parsed_again(tmp_path, make_ctx, monkeypatch):
    """Size and mtime the same (``touch -r``, a tool restoring times): the change time and inode tell."""
    (tmp_path / "ws").mkdir()
    src = tmp_path / "ws" / "a.go"
    src.write_text("package p\n\nfunc Old() {}\n")
    os.utime(src, (OLD, OLD))
    ctx = _ctx(make_ctx, tmp_path / "ws", tmp_path / "cache")
    assert [i["name"] for i in outline(ctx, kind="function")] == ["Old"]
    assert _parsed_during(monkeypatch, lambda: outline(ctx)) == []
    src.write_text("package p\n\nfunc New() {}\n")
    os.utime(src, (OLD, OLD))
    parsed = _parsed_during(monkeypatch, lambda: outline(ctx))
    assert parsed == ["a.go"] and [i["name"] for i in outline(ctx, kind="function")] == ["New"]


def test_items_kept_by_another_run_since_the_stamps_were_read_are_not_used(tmp_path, make_ctx):
    """A run reads the stamps; another run then keeps a newer version of a file: the first run's ``items`` give
    nothing for it (the caller parses it) rather than the other version's items under the old stamp."""
    (tmp_path / "ws").mkdir()
    src = tmp_path / "ws" / "a.py"
    src.write_text("def old():\n    pass\n")
    os.utime(src, (OLD, OLD))
    ctx = _ctx(make_ctx, tmp_path / "ws", tmp_path / "cache")
    outline(ctx)
    first = OutlineCache(_cache_file(tmp_path / "cache"))
    ((_, *stamp, kinds),) = first.stamps.values()
    stamp = tuple(stamp)
    assert kinds == "f" and first.items([("a.py", stamp)]).keys() == {"a.py"}
    src.write_text("def new():\n    pass\n")
    os.utime(src, (OLD + 1, OLD + 1))
    outline(ctx)  # the other run
    assert first.items([("a.py", stamp)]) == {}
    first.close()
    assert [i["name"] for i in outline(ctx)] == ["new"]


def test_runs_at_once_share_the_cache_safely(real, tmp_path, make_ctx):
    """Four runs outlining at once on a cold cache, while a file is deleted: each answers exactly, the cache
    ends up whole and a later cached run equals an uncached one."""
    expected = outline(_ctx(make_ctx, real, tmp_path / "reference"), kind="class")
    answers: list[object] = []

    def one() -> None:
        answers.append(outline(_ctx(make_ctx, real, tmp_path / "shared"), kind="class"))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [expected] * 4
    (real / "jinja2" / "lexer.py").unlink()
    gone = [i for i in expected if i["path"] != "jinja2/lexer.py"]
    ctx = _ctx(make_ctx, real, tmp_path / "shared")
    assert outline(ctx, kind="class") == gone
    with sqlite3.connect(_cache_file(tmp_path / "shared")) as db:
        for table in ("stamps", "names", "items"):
            paths = {row[0] for row in db.execute(f"SELECT path FROM {table}")}  # noqa: S608
            assert "jinja2/lexer.py" not in paths and "jinja2/utils.py" in paths, table
    assert outline(ctx, kind="class") == gone


def test_a_deadline_in_process_parsing_keeps_what_was_parsed(tmp_path, make_ctx):
    """Few files (parsed here, one by one): the deadline stops the run and the files parsed before it are kept."""
    (tmp_path / "ws").mkdir()
    for i in range(40):
        (tmp_path / "ws" / f"m{i:02d}.py").write_text(f"def f{i}():\n    pass\n")
        os.utime(tmp_path / "ws" / f"m{i:02d}.py", (OLD, OLD))

    class PastAtFile33(Deadline):
        def check(self, tool: str, detail: str = "") -> None:
            if tool == "outline" and "parsing file 33 " in detail:
                raise self.stopped(tool, detail)

    ctx = make_ctx(tmp_path / "ws", deadline=PastAtFile33(30.0),
                   environ={"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)})
    with pytest.raises(ToolError, match="parsing file 33 of 40"):
        outline(ctx)
    with sqlite3.connect(_cache_file(tmp_path / "cache")) as db:
        assert db.execute("SELECT count(*) FROM stamps").fetchone()[0] == 32


@pytest.mark.parametrize("cap", [2_000, 20_000])
def test_the_answer_fits_the_limit_as_the_runner_counts_it(tmp_path, make_ctx, cap):
    """outline sizes its answer itself (the runner then skips its own count): never over the limit as the runner
    counts it (non-ASCII names and docstrings included), and never more than one file's items short of it."""
    from codeact.core.limits import within
    from codeact.core.tool import Cut

    (tmp_path / "ws").mkdir()
    for i in range(40):
        (tmp_path / "ws" / f"m{i:02d}.py").write_text(
            "".join(f'def café_{k}():\n    """Ünïcode ✓ {k}."""\n\n' for k in range(10)), encoding="utf-8")
    answer = outline(_ctx(make_ctx, tmp_path / "ws", tmp_path / "cache", tool_result=cap))
    assert isinstance(answer, Cut) and answer.within == cap
    text, whole, _ = within(list(answer), cap)
    assert whole and len(text) <= cap
    assert len(text) > cap - 10 * len(within(answer[0], cap)[0]) - 200


def test_a_name_that_is_not_utf8_is_kept_and_found_again(tmp_path, make_ctx, monkeypatch):
    """A file name that is not UTF-8 is a key too (a BLOB beside the TEXT keys): cached, found again, forgotten."""
    ws = tmp_path / "ws"
    ws.mkdir()
    odd = os.path.join(os.fsencode(ws), b"l\xe9gacy.py")
    with open(odd, "wb") as handle:
        handle.write(b"class Old:\n    pass\n")
    (ws / "plain.py").write_text("def f():\n    pass\n")
    for name in (odd, ws / "plain.py"):
        os.utime(name, (OLD, OLD))
    ctx = _ctx(make_ctx, ws, tmp_path / "cache")
    first = outline(ctx)
    assert [i["path"] for i in first] == ['"l\\351gacy.py"', "plain.py"]
    assert _parsed_during(monkeypatch, lambda: outline(ctx)) == []
    assert outline(ctx) == first
    os.unlink(odd)
    assert [i["path"] for i in outline(ctx)] == ["plain.py"]
    with sqlite3.connect(_cache_file(tmp_path / "cache")) as db:
        assert [row[0] for row in db.execute("SELECT path FROM stamps")] == ["plain.py"]
