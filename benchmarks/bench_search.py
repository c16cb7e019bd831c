"""grep and glob over a generated 50,000-file tree, against ripgrep on the same tree, side by side.

The tools are called as a run calls them (the host function with its ToolContext), so the figures include
spawning ripgrep, parsing its output, the ignore/glob filtering, sorting and making paths workspace-relative.
ripgrep's own figures are whole ``rg`` processes writing to a pipe (not /dev/null, which ripgrep short-cuts).

    python benchmarks/bench_search.py [--files 50000] [--runs 5] [--fallback] [--json results.json]

The tree is generated once into the temporary folder and reused (``--tree DIR`` to choose where).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime"))

from codeact.limits import Limits  # noqa: E402
from codeact.policy import Workspace  # noqa: E402
from codeact.tools import search  # noqa: E402
from codeact.tools.base import ToolContext  # noqa: E402

TREE_VERSION = 2
TARGET = 1.5
EXTS = (".py", ".md", ".json", ".txt", ".js")


def make_tree(root: Path, files: int) -> Path:
    """A deterministic source-like git work tree: folders of 50 files, TODOs and imports sprinkled in."""
    marker = root / ".bench-complete"
    if marker.exists() and marker.read_text() == f"{TREE_VERSION} {files}":
        return root
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)  # a repository, as workspaces are: plain rg honours .gitignore too
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    per_dir, subs = 50, 20
    for i in range(files):
        top, sub, n = i // (per_dir * subs), (i // per_dir) % subs, i % per_dir
        folder = root / f"pkg{top:03d}" / f"mod{sub:02d}"
        if n == 0:
            folder.mkdir(parents=True, exist_ok=True)
        ext = EXTS[i % len(EXTS)]
        lines = [f"# file {i}", "import os" if i % 3 == 0 else "import sys", ""]
        lines += [f"def function_{i}_{k}(value):" + ("  # TODO: tidy" if (i + k) % 37 == 0 else "")
                  + f"\n    return value * {k}" for k in range(8)]
        (folder / f"file{n:02d}{ext}").write_text("\n".join(lines) + "\n")
    marker.write_text(f"{TREE_VERSION} {files}")
    return root


def _cpu() -> float:
    """CPU seconds used so far by this process and its reaped children (ripgrep), all threads."""
    import resource
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def paired(ours: Callable[[], object], theirs: Callable[[], object], runs: int) -> dict[str, float]:
    """Run the two alternately (so both see the same machine load): median wall and CPU times in ms.

    CPU time (user + system, every thread, ripgrep included) moves less than wall time on a busy machine."""
    ours(), theirs()  # warm the page cache and ripgrep's binary
    wall: dict[str, list[float]] = {"codeact": [], "rg": []}
    cpu: dict[str, list[float]] = {"codeact": [], "rg": []}
    for _ in range(runs):
        for key, fn in (("codeact", ours), ("rg", theirs)):
            cpu0, started = _cpu(), time.perf_counter()
            fn()
            wall[key].append((time.perf_counter() - started) * 1000)
            cpu[key].append((_cpu() - cpu0) * 1000)
    return {"codeact_ms": statistics.median(wall["codeact"]), "rg_ms": statistics.median(wall["rg"]),
            "codeact_cpu_ms": statistics.median(cpu["codeact"]), "rg_cpu_ms": statistics.median(cpu["rg"])}


def rg_process(rg: str, args: list[str], cwd: Path) -> Callable[[], object]:
    def go() -> object:
        done = subprocess.run([rg, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
        return done.stdout
    return go


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (median)")
    parser.add_argument("--tree", type=Path, help="where to generate the tree (default: the temp folder)")
    parser.add_argument("--fallback", action="store_true", help="also time the pure-Python search (slow)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    rg = search.rg_binary()
    if rg is None:
        raise SystemExit("ripgrep is not installed: pip install ripgrep (the comparison needs it)")
    tree = args.tree or Path(tempfile.gettempdir()) / f"codeact-bench-tree-{args.files}"
    started = time.perf_counter()
    make_tree(tree, args.files)
    setup_s = time.perf_counter() - started
    ctx = ToolContext(workspace=Workspace.at(tree), limits=Limits())

    cases = [
        ("grep TODO", lambda: search.grep(ctx, pattern="TODO"), ["--regexp", "TODO"]),
        ("grep `import os` in *.py", lambda: search.grep(ctx, pattern="^import os", glob="*.py"),
         ["--glob", "*.py", "--regexp", "^import os"]),
        ("grep -i, no match", lambda: search.grep(ctx, pattern="zebra_[0-9]+", ignore_case=True),
         ["--ignore-case", "--regexp", "zebra_[0-9]+"]),
        ("glob * (every file)", lambda: search.glob(ctx, pattern="*"), ["--files"]),
        ("glob **/*.py", lambda: search.glob(ctx, pattern="**/*.py"), ["--files", "--glob", "*.py"]),
        ("glob pkg001/**/*.json", lambda: search.glob(ctx, pattern="pkg001/**/*.json"),
         ["--files", "--glob", "pkg001/**/*.json"]),
        ("glob pkg00*/**/*.json", lambda: search.glob(ctx, pattern="pkg00*/**/*.json"),
         ["--files", "--glob", "pkg00*/**/*.json"]),
    ]
    results = []
    for name, tool, rg_args in cases:
        row: dict[str, Any] = {"case": name, **paired(tool, rg_process(rg, rg_args, tree), args.runs),
               "results": len(tool()), "rg_command": "rg " + " ".join(rg_args)}  # type: ignore[arg-type]
        row["ratio"] = row["codeact_ms"] / row["rg_ms"]
        row["cpu_ratio"] = row["codeact_cpu_ms"] / row["rg_cpu_ms"]
        if args.fallback:
            saved = search._rg_cache
            search._rg_cache = None
            try:
                started = time.perf_counter()
                tool()
                row["python_fallback_ms"] = (time.perf_counter() - started) * 1000
            finally:
                search._rg_cache = saved
        results.append(row)

    print(f"{args.files} files in {tree} (generated/checked in {setup_s:.1f} s); ripgrep {rg}; "
          f"medians of {args.runs} alternating runs; {os.cpu_count()} CPUs\n")
    head = "| case | results | codeact ms | ripgrep ms | ratio | CPU ms codeact / rg | CPU ratio | target |"
    sep = "|---|---:|---:|---:|---:|---:|---:|---|"
    if args.fallback:
        head, sep = head + " python fallback ms |", sep + "---:|"
    print(head + "\n" + sep)
    for r in results:
        line = (f"| {r['case']} | {r['results']} | {r['codeact_ms']:.1f} | {r['rg_ms']:.1f} | {r['ratio']:.2f}x | "
                f"{r['codeact_cpu_ms']:.0f} / {r['rg_cpu_ms']:.0f} | {r['cpu_ratio']:.2f}x | <= {TARGET}x |")
        if args.fallback:
            line += f" {r['python_fallback_ms']:.0f} |"
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps({"files": args.files, "runs": args.runs, "rg": rg,
                                               "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
