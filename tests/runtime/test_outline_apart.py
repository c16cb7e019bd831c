"""outline's costly files (issue 40): a tree-sitter file over IN_PROCESS_BYTES, or one whose reading would walk far,
is parsed in a worker process only, which the run's deadline kills (no process left behind) and the run's memory
limit bounds (an ``error`` item for that file); small files are parsed here as before, and every file's items are
the same wherever it was parsed."""
from __future__ import annotations

import marshal
import os
import sys
import time
from pathlib import Path

import pytest

from codeact.core.limits import Deadline, Limits
from codeact.errors import ToolTimeout
from codeact.tools import outline as outline_mod
from codeact.tools import outline_langs
from codeact.tools.outline import outline
from codeact.tools.outline_langs import BY_ENDING, IN_PROCESS_BYTES, TooCostly, outline_source
from codeact.tools.outline_python import outline_python

OLD = time.time() - 600  # past the cache's racy window
DEEP = 200_000  # openers: tree-sitter's query over the error node they make takes about 25 s in one C call
# One file a language whose query is quadratic: an expression (or block) of DEEP openers that never close.
PATHOLOGICAL = {
    "a.js": "x = " + "[" * DEEP, "a.ts": "x = " + "[" * DEEP, "a.tsx": "x = " + "!" * DEEP,
    "a.go": "func (" + "[" * DEEP, "a.rs": "fn f(){x=" + "[" * DEEP, "a.java": "class A{void f(){x=" + "(" * DEEP,
    "a.cs": "class A{void f(){x=" + "(" * DEEP, "a.c": "{" * DEEP, "a.cpp": "{" * DEEP, "a.rb": "x = " + "[" * DEEP,
    "a.php": "<?php $x = " + "(" * DEEP, "a.kt": "val x = " + "(" * DEEP,
}
# Ordinary code, repeated past IN_PROCESS_BYTES: parsed by a worker, its items as if parsed here.
BLOCKS = {
    ".js": "class A{i} {{\n  m(x) {{\n    return x * 7;\n  }}\n}}\nfunction f{i}(a) {{\n  return a;\n}}\n",
    ".go": "type S{i} struct{{ x int }}\n\nfunc (s *S{i}) Serve(n int) int {{\n\treturn n\n}}\n\nfunc T{i}() {{}}\n",
    ".c": "struct Q{i} {{ int y; }};\nstatic int f{i}(int a) {{\n  return a * 7;\n}}\n",
    ".rb": "module M{i}\n  class A\n    def m(x)\n      x * 7\n    end\n  end\nend\n",
}


def _ctx(make_ctx, root: Path, home: Path, **kw):
    return make_ctx(root, environ={"XDG_CACHE_HOME": str(home / "cache"), "HOME": str(home)}, **kw)


def _outline_workers() -> list[int]:
    """This process's children that are outline workers (none is left once a call returns or raises)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                ppid = int(handle.read().rpartition(")")[2].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"codeact.tools.outline import main" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_a_pathological_file_stops_at_the_deadline_and_leaves_no_worker(name, tmp_path, make_ctx):
    """One file of each language whose query would hold the host for about 25 s: parsed in a worker, which the
    run's deadline (1 s) kills; the call raises the deadline's error (the program's TimeoutError) soon after."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / name).write_text(PATHOLOGICAL[name])
    ctx = _ctx(make_ctx, tmp_path / "ws", tmp_path, deadline=Deadline(1.0).start())
    started = time.monotonic()
    with pytest.raises(ToolTimeout, match=r"outline\(\) was stopped at the run's deadline while parsing 1 files"):
        outline(ctx, path=name)
    took = time.monotonic() - started
    assert took < 5, f"a call with 1 s left took {took:.1f} s"
    assert _outline_workers() == []


def test_the_host_gives_up_a_walk_that_would_cost_more_than_a_moment():
    """A small file (2 KB) of methods deep in blocks of a class: each method's owner is found by walking up every
    block, and each step up is as long as the tree is deep. Here the walk stops at WALK_BUDGET (TooCostly, at
    once); unbounded (a worker), the items are read in full."""
    data = ("class A{m(){" + "{" * 1000 + "function f(){}" * 20 + "}" * 1000 + "}}").encode()
    assert len(data) < IN_PROCESS_BYTES
    with pytest.raises(TooCostly):  # by WALK_BUDGET's count of steps, not by a clock
        outline_source(BY_ENDING[".js"], data, bounded=True)
    items = outline_source(BY_ENDING[".js"], data)
    assert [item[:3] for item in items] == [("class", "A", "A"), ("method", "m", "A.m")] + [("function", "f", "f")] * 20


def test_a_walk_given_up_here_is_outlined_by_a_worker(tmp_path, make_ctx, monkeypatch):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "deep.js").write_text("class A{m(){" + "{" * 300 + "function f(){}" * 5 + "}" * 300 + "}}")
    monkeypatch.setattr(outline_langs, "WALK_BUDGET", 1000)
    apart: list[list[str]] = []
    real = outline_mod._parse_apart
    monkeypatch.setattr(outline_mod, "_parse_apart", lambda parsing, rels, found: (
        apart.append(rels), real(parsing, rels, found)))
    answer = outline(_ctx(make_ctx, tmp_path / "ws", tmp_path))
    assert apart == [["deep.js"]]
    assert [(i["kind"], i["qualname"]) for i in answer] == [("class", "A"), ("method", "A.m")] + [("function", "f")] * 5


def _tree(root: Path, small: int) -> list[str]:
    """``small`` small files of four languages, and a file of each over IN_PROCESS_BYTES; the large ones' names."""
    large = []
    for ending, block in BLOCKS.items():
        for i in range(small):
            (root / f"s{i:03d}{ending}").write_text("".join(block.format(i=k) for k in range(3)))
        text, k = "", 0
        while len(text) <= IN_PROCESS_BYTES:
            text += block.format(i=k)
            k += 1
        (root / f"large{ending}").write_text(text)
        large.append(f"large{ending}")
    for path in root.iterdir():
        os.utime(path, (OLD, OLD))
    return large


@pytest.mark.parametrize("small", [3, 40])  # parsed here one by one; by this process and workers
def test_costly_files_are_outlined_by_a_worker_alike(small, tmp_path, make_ctx, monkeypatch):
    """Small files are parsed here (as before), large ones by a worker only, and the answer is the one every file
    parsed here gives (IN_PROCESS_BYTES raised past them all)."""
    (tmp_path / "ws").mkdir()
    large = _tree(tmp_path / "ws", small)
    if small > 10:
        monkeypatch.setattr(outline_mod, "PARALLEL_MIN", 2)
        monkeypatch.setattr(outline_mod.os, "cpu_count", lambda: 3)
    here: list[str] = []
    real = outline_mod.outline_file

    def counting(prefix, rel, bounded=False):
        if bounded:
            here.append(rel)
        return real(prefix, rel, bounded)

    monkeypatch.setattr(outline_mod, "outline_file", counting)
    answer = outline(_ctx(make_ctx, tmp_path / "ws", tmp_path / "a"))
    assert here and not set(here) & set(large)  # small files here, the large ones never
    if small < 10:
        assert len(here) == 4 * small
    monkeypatch.setattr(outline_mod, "IN_PROCESS_BYTES", 1 << 30)
    monkeypatch.setattr(outline_langs, "IN_PROCESS_BYTES", 1 << 30)
    monkeypatch.setattr(outline_mod, "PARALLEL_MIN", 1 << 30)
    assert outline(_ctx(make_ctx, tmp_path / "ws", tmp_path / "b")) == answer
    assert {item["path"] for item in answer} >= set(large) and not any(i["kind"] == "error" for i in answer)
    assert sum(1 for item in answer if item["path"] == "large.go" and item["kind"] == "method") > 100
    assert outline(_ctx(make_ctx, tmp_path / "ws", tmp_path / "a")) == answer  # from the cache


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory bound is RLIMIT_AS, on Linux")
def test_a_worker_past_the_memory_limit_is_an_error_item_and_the_rest_go_on(tmp_path, make_ctx):
    """An ambiguous C++ file (``a<`` repeated, 800 KB) takes tree-sitter about 3 KB a byte: its worker ends at the
    run's memory limit (64 MiB, and the headroom), the file gets an ``error`` item saying so, and a new worker
    parses the files after it."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.cpp").write_text("int f(){" + "a<" * 400_000)
    (tmp_path / "ws" / "b.cpp").write_text("int g() { return 1; }\n" * 1000)
    ctx = _ctx(make_ctx, tmp_path / "ws", tmp_path, limits=Limits(memory=64 << 20),
               deadline=Deadline(60.0).start())
    answer = outline(ctx)
    (error,) = [item for item in answer if item["path"] == "a.cpp"]
    assert error["kind"] == "error" and error["line"] is None
    assert "not parsed: the process parsing it ended" in error["docstring"] and "64 MiB" in error["docstring"]
    assert sum(1 for item in answer if item["path"] == "b.cpp" and item["name"] == "g") == 1000
    assert _outline_workers() == []


def test_a_deeply_nested_python_file_is_an_error_item_at_once():
    """A Python file is parsed by ``ast`` (in the host up to PYTHON_IN_PROCESS_BYTES, in a worker past it): its
    parser refuses deep nesting itself, as an error item."""
    for text in ("x = " + "-" * 300_000 + "1", "x = " + "[" * 300_000, "x = " + "1+" * 100_000 + "1"):
        items = outline_python(text.encode(), "a.py")
        assert [item[0] for item in items] == ["error"], items[:1]


def test_a_worker_sends_one_file_at_a_time_when_asked(tmp_path):
    """The spec a worker reads: the prefix, the files, and how many to send at once."""
    import subprocess

    for name in ("a.go", "b.go"):
        (tmp_path / name).write_text("package p\nfunc F() {}\n")
    spec = tmp_path / "spec.bin"
    spec.write_bytes(marshal.dumps((f"{tmp_path}/", ["a.go", "b.go"], 1)))
    out = subprocess.run([sys.executable, "-I", "-c", outline_mod._BOOT, outline_mod._RUNTIME, str(spec)],
                         capture_output=True, check=True).stdout
    size = int.from_bytes(out[:4], "little")
    assert len(marshal.loads(out[4:4 + size])) == 1 and len(out) == 2 * (4 + size)
