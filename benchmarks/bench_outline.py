"""`outline` over a generated tree of many languages, side by side with the parsers run directly.

The tree: ``--files`` source files (default 60,000), spread over the twelve languages outline reads, each with a
few types, functions, methods and imports. Measured in one run:

- the reference: one process parsing every file with the same parsers (``ast.parse``; tree-sitter's
  ``Parser.parse``) in a pool of one worker per CPU, nothing extracted;
- ``outline()`` uncached (a fresh cache folder): listing, parsing in workers, extracting, caching;
  budget <= 1.5x the reference;
- ``outline()`` cached (the same call again): budget <= 2 s at 60,000 files;
- the cache after 10 files change: how many rows were written (only those 10, not the whole cache);
- the user's path: the tree lies in a repository stamped by the real ``copier copy``; the cached outline through its
  launcher (``codeact run``), with the warm server and without (``CODEACT_SERVER=0``), the answer crossing into the
  sandbox and printed, budget <= 2 s at 60,000 files like the in-process call;
- start-up: a fresh process importing tree-sitter and making all twelve parsers and queries;
- install size: what the pinned grammar wheels and tree-sitter take in the venv (from their RECORD files).

    python benchmarks/bench_outline.py [--files 60000] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "runtime"))
sys.path.insert(0, str(HERE))

from userpath import TABLE_HEAD, machine_load, row, stamp_repo, time_processes  # noqa: E402

PINNED = ("tree-sitter", "tree-sitter-javascript", "tree-sitter-typescript", "tree-sitter-go", "tree-sitter-rust",
          "tree-sitter-java", "tree-sitter-c-sharp", "tree-sitter-c", "tree-sitter-cpp", "tree-sitter-ruby",
          "tree-sitter-php", "tree-sitter-kotlin")  # template/{{ codeact_dir }}/requirements.txt's outline pins
UNCACHED_TARGET = 1.5  # outline() uncached <= 1.5x the reference
CACHED_BUDGET_S = 2.0  # at 60,000 files
HEADS = {".go": "package p\n\nimport \"fmt\"\n", ".java": "package a;\nimport java.util.List;\n",
         ".php": "<?php\nnamespace App;\nuse Foo\\Bar;\n", ".kt": "package a\nimport x.y.Z\n",
         ".cs": "using System;\n", ".rs": "use std::fmt;\n", ".c": "#include <stdio.h>\n",
         ".cpp": "#include <vector>\n", ".rb": "require 'json'\n", ".py": "import os\nfrom .core import run\n",
         ".ts": "import { z } from \"zod\";\n", ".tsx": "import React from \"react\";\n",
         ".js": "import x from \"./x.js\";\n"}
BLOCKS = {  # one block a few times a file: a type with a method, a function, bodies of a few lines
    ".py": "\n\nclass Thing{i}(Base):\n    \"\"\"Doc.\"\"\"\n\n    def size(self, x):\n        y = x * 7\n"
           "        if y > 3:\n            return y\n        return [v for v in range(y)]\n\n\ndef top_{i}(x):\n"
           "    total = 0\n    for v in x:\n        total += v\n    return total\n",
    ".ts": "export interface Shape{i} {{ area(): number }}\nexport class Box{i} {{\n  area(): number {{\n"
           "    const v = 7 * 2;\n    return v > 3 ? v : -v;\n  }}\n}}\nexport const make{i} = (a: number) => {{\n"
           "  return a * 2;\n}};\n",
    ".tsx": "export function View{i}(p: {{ n: number }}) {{\n  const v = p.n * 7;\n  return <div>{{v}}</div>;\n}}\n",
    ".js": "class A{i} {{\n  m(x) {{\n    const v = x * 7;\n    return v > 3 ? v : -v;\n  }}\n}}\n"
           "function f{i}(a) {{\n  return a.map((v) => v * 2);\n}}\n",
    ".go": "\ntype Server{i} struct{{ x int }}\n\nfunc (s *Server{i}) Serve(n int) int {{\n\tv := n * 7\n"
           "\tif v > 3 {{\n\t\tfmt.Println(v)\n\t}}\n\treturn v\n}}\n\nfunc Top{i}() {{}}\n",
    ".rs": "pub struct P{i} {{ x: i32 }}\nimpl P{i} {{\n    pub fn new(v: i32) -> Self {{\n        let y = v * 2;\n"
           "        P{i} {{ x: y }}\n    }}\n}}\nfn top_{i}() -> i32 {{ 7 }}\n",
    ".java": "class A{i} {{\n  int m(int x) {{\n    int v = x * 7;\n    return v > 3 ? v : -v;\n  }}\n"
             "  interface I {{ void f(); }}\n}}\n",
    ".cs": "namespace N{i} {{\n  public class C {{\n    int M(int x) {{\n      var v = x * 7;\n      return v;\n"
           "    }}\n  }}\n  enum E {{ A }}\n}}\n",
    ".c": "struct Q{i} {{ int y; }};\nstatic int f{i}(int a) {{\n  int v = a * 7;\n  return v > 3 ? v : -v;\n}}\n",
    ".cpp": "namespace n{i} {{ class C {{ int inl(int a) {{ return a * 7; }} }}; }}\nint free{i}(int a) {{\n"
            "  return a + 1;\n}}\n",
    ".rb": "module M{i}\n  class A\n    def m(x)\n      v = x * 7\n      v > 3 ? v : -v\n    end\n  end\nend\n",
    ".php": "class C{i} {{\n  public function f($x) {{\n    $v = $x * 7;\n    return $v;\n  }}\n}}\n"
            "function top{i}() {{}}\n",
    ".kt": "class K{i}(val x: Int) {{\n    fun f(): Int {{\n        val v = x * 7\n        return v\n    }}\n}}\n"
           "fun top{i}() {{}}\n",
}
BLOCKS_A_FILE = 8
WEIGHTS = {".py": 6, ".ts": 3, ".js": 2, ".go": 2, ".java": 2, ".rs": 1, ".cs": 1, ".c": 1, ".cpp": 1, ".rb": 1,
           ".php": 1, ".kt": 1, ".tsx": 1}


def make_tree(root: Path, files: int) -> list[str]:
    """``files`` source files in folders of 100, the languages in :data:`WEIGHTS` proportions; their paths."""
    cycle = [ending for ending, weight in WEIGHTS.items() for _ in range(weight)]
    rels = []
    for i in range(files):
        ending = cycle[i % len(cycle)]
        rel = f"pkg{i // 10000:02d}/mod{(i // 100) % 100:02d}/file{i % 100:02d}{ending}"
        path = root / rel
        if i % 100 == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADS[ending] + "".join(BLOCKS[ending].format(i=f"{i}x{k}")
                                                for k in range(BLOCKS_A_FILE)))
        rels.append(rel)
    old = time.time() - 600  # older than the cache's racy window
    for rel in rels:
        os.utime(root / rel, (old, old))
    return rels


_PARSERS: dict[str, Any] = {}


def _parse_only(args: tuple[str, list[str]]) -> int:
    """The reference worker: parse each file with the same parser outline uses (a plain ``Parser`` of the same
    grammar; ``ast.parse``), extract nothing."""
    import ast
    import importlib

    from tree_sitter import Language, Parser

    from codeact.tools.outline_langs import language_of

    root, rels = args
    for rel in rels:
        data = (Path(root) / rel).read_bytes()
        if rel.endswith(".py"):
            ast.parse(data)
            continue
        lang = language_of(rel)
        assert lang is not None
        parser = _PARSERS.get(lang.name)
        if parser is None:
            module, _, function = lang.grammar.partition(":")
            parser = _PARSERS[lang.name] = Parser(Language(getattr(importlib.import_module(module), function)()))
        parser.parse(data)
    return len(rels)


def reference(root: Path, rels: list[str]) -> float:
    """Seconds for one pool of a worker per CPU to parse every file (the pool's start included)."""
    workers = os.cpu_count() or 1
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        done = sum(pool.map(_parse_only, [(str(root), rels[i::workers]) for i in range(workers)]))
    assert done == len(rels)
    return time.perf_counter() - started


def timed_outline(root: Path, cache: Path) -> tuple[float, int]:
    """Seconds and items of one ``outline()`` of the whole workspace ``root``, in this process."""
    from codeact.core.boundary import Workspace
    from codeact.core.limits import Limits
    from codeact.core.tool import ToolContext
    from codeact.tools.outline import outline

    ctx = ToolContext(workspace=Workspace.at(root), limits=Limits(timeout=3600),
                      environ={"XDG_CACHE_HOME": str(cache), "HOME": str(cache)})
    started = time.perf_counter()
    items = outline(ctx)  # every file read, as a model's first call does; the answer cut at the result limit
    return time.perf_counter() - started, len(items)


def launcher_timings(user: Any, cache: Path, items: int) -> dict[str, float]:
    """Median wall milliseconds of ``codeact run`` printing the length of a cached whole-workspace outline through
    the stamped launcher: with the warm server (where the runtime has one) and without."""
    extra = {"XDG_CACHE_HOME": str(cache)}  # the cache the in-process calls filled
    code = "r = outline()\nprint(len(r))"
    cmds = {"no server": (user.run_cmd(code), user.env("cold", extra))}
    servers: dict[str, int | None] = {}
    if user.start_server(extra):
        cmds["warm server"] = (user.run_cmd(code), user.env("warm", extra))
        servers["warm server"] = user.server_pid(extra)
    try:
        timings = time_processes(cmds, 3, cwd=user.repo, check_out={name: str(items) for name in cmds},
                                 servers=servers)
    finally:
        user.stop_server(extra)
    return {name: timing.wall_ms for name, timing in timings.items()}


def rows_written(cache: Path) -> int:
    """Rows the cache database changed since it was opened: SQLite's own count, read from the file's pages."""
    import sqlite3

    (db_file,) = (cache / "codeact" / "outline").glob("*.sqlite")
    with sqlite3.connect(db_file) as db:
        return int(db.execute("SELECT count(*) FROM stamps").fetchone()[0])


def startup() -> tuple[float, float]:
    """Seconds for a fresh process to make all twelve parsers and queries, and for a bare ``python -c pass``."""
    import subprocess

    code = ("import sys; sys.path.insert(0, sys.argv[1]); from codeact.tools.outline_langs import LANGUAGES, "
            "_parser\nfor lang in LANGUAGES: _parser(lang)")
    runtime = str(HERE.parent / "runtime")

    def best(cmd: list[str]) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run(cmd, check=True)
            times.append(time.perf_counter() - started)
        return min(times)

    return best([sys.executable, "-c", code, runtime]), best([sys.executable, "-c", "pass"])


def install_size() -> tuple[int, list[str]]:
    """Bytes the tree-sitter distributions take (their RECORD files), and their names with versions."""
    from importlib import metadata

    total, names = 0, []
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().replace("_", "-") in PINNED:
            names.append(f"{name}=={dist.version}")
            for file in dist.files or []:
                try:
                    total += os.path.getsize(str(dist.locate_file(file)))
                except OSError:
                    pass
    return total, sorted(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60_000, help="source files in the tree (default 60000)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codeact-bench-outline-") as scratch:
        user = stamp_repo(Path(scratch, "user"))
        root = user.repo.resolve()
        rels = make_tree(root / "tree", args.files)
        rels = [f"tree/{rel}" for rel in rels]
        cache = Path(scratch, "cache")
        ref = reference(root, rels)
        cold, found = timed_outline(root, cache)
        warm, again = timed_outline(root, cache)
        assert found == again, (found, again)
        kept = rows_written(cache)
        launched = launcher_timings(user, cache, found)
        for rel in rels[:10]:  # ten files change: the next outline writes ten rows
            (root / rel).write_text((root / rel).read_text() + "\n")
            os.utime(root / rel, (time.time() - 600, time.time() - 600))
        from codeact.tools import outline_cache

        written: list[int] = []
        save = outline_cache.OutlineCache.save

        def counting(self: Any) -> None:
            written.append(len(self.new) + len(self.gone))
            save(self)

        outline_cache.OutlineCache.save = counting  # type: ignore[method-assign]
        try:
            changed, _ = timed_outline(root, cache)
        finally:
            outline_cache.OutlineCache.save = save  # type: ignore[method-assign]
    start, bare = startup()
    size, dists = install_size()
    budget = CACHED_BUDGET_S * args.files / 60_000
    print(TABLE_HEAD)
    print(row(f"outline() uncached, {args.files:,} files", f"{cold:.2f} s", f"{ref:.2f} s (parse only, "
              f"{os.cpu_count()} workers)", cold / ref, UNCACHED_TARGET))
    print(row(f"outline() cached, {args.files:,} files", f"{warm:.2f} s", f"{budget:.2f} s budget", warm / budget, 1.0))
    for mode, timing in launched.items():
        print(row(f"`codeact run` of `outline()`, cached, {mode}, {args.files:,} files", f"{timing / 1000:.2f} s",
                  f"{budget:.2f} s budget", timing / 1000 / budget, 1.0))
    print(row("outline() after 10 files changed", f"{changed:.2f} s; {written[-1] if written else 0} cache rows "
              f"written of {kept:,}", "", None, None))
    print(row("start-up: tree-sitter and 12 grammars, parsers and queries", f"{start * 1000:.0f} ms",
              f"{bare * 1000:.0f} ms `python -c pass`", None, None))
    print(row("install size of the grammar wheels", f"{size / 2**20:.1f} MiB", ", ".join(dists), None, None))
    print(f"\nMeasured under {machine_load()}.")
    if args.json:
        Path(args.json).write_text(json.dumps({"files": args.files, "reference_s": ref, "uncached_s": cold,
                                               "cached_s": warm, "changed_s": changed, "rows_written": written,
                                               "startup_s": start, "bare_s": bare, "install_bytes": size,
                                               "dists": dists}, indent=2))
    over = [t for t in launched.values() if t / 1000 > budget]
    return 0 if cold / ref <= UNCACHED_TARGET and warm <= budget and not over else 1


if __name__ == "__main__":
    sys.exit(main())
