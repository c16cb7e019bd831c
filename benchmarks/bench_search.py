"""`codeact run` grep and glob over 50,000 files, whole process, against `rg` whole process, same result count.

On the user's path: a git repository stamped by the real ``copier copy`` holding a generated source-like tree of
50,000 files under ``tree/``; each case is the launcher running a program that searches and prints how many
results it got (``max_results`` and the tool-result limit raised so nothing is cut), cold (``CODEACT_SERVER=0``) and warm (``codeact server
start`` first; "n/a" where the runtime has no server), against a whole ``rg`` process writing every match to a pipe
(not /dev/null, which ripgrep short-cuts). The counts must be equal, else the script stops.

    python benchmarks/bench_search.py [--files 50000] [--runs 5] [--quick] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from userpath import TABLE_HEAD, ms, na_row, row, scratch, stamp_repo, time_processes  # noqa: E402

TARGET = 1.5  # warm search <= 1.5x rg
EXTS = (".py", ".md", ".json", ".txt", ".js")
TREE = "tree"
# 10,000+ matches exceed the default 1 MiB tool-result limit, which would cut the list the program counts
LIMITS = {"CODEACT_TOOL_RESULT": str(64 * 2**20), "CODEACT_MEMORY": str(2**30), "CODEACT_TIMEOUT": "300"}


def make_tree(root: Path, files: int) -> None:
    """A deterministic source-like tree: folders of 50 files, TODOs and imports sprinkled in, a .gitignore."""
    root.mkdir(parents=True, exist_ok=True)
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
    (root / "pkg000" / "build").mkdir(exist_ok=True)
    (root / "pkg000" / "build" / "ignored.py").write_text("# TODO: ignored\n")


CASES = [  # name, program's call (its len() is printed), rg arguments
    ("grep TODO", f'grep(pattern="TODO", path="{TREE}", max_results=10**7)', ["--regexp", "TODO", TREE]),
    ("grep `import os` in *.py", f'grep(pattern="^import os", path="{TREE}", glob="*.py", max_results=10**7)',
     ["--glob", "*.py", "--regexp", "^import os", TREE]),
    ("grep -i, no match", f'grep(pattern="zebra_[0-9]+", path="{TREE}", ignore_case=True, max_results=10**7)',
     ["--ignore-case", "--regexp", "zebra_[0-9]+", TREE]),
    ("glob **/*.py", f'glob(pattern="**/*.py", path="{TREE}")', ["--files", "--glob", "*.py", TREE]),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="a small run (for the smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.runs = 2000, 1

    root = scratch("codeact-bench-search-")
    try:
        repo = stamp_repo(root)
        started = time.perf_counter()
        make_tree(repo.repo / TREE, args.files)
        setup_s = time.perf_counter() - started
        rg = shutil.which("rg", path=str(repo.python.parent)) or shutil.which("rg")
        if rg is None:
            raise SystemExit("ripgrep is not installed (the launcher's venv ships it on x86_64 and arm64)")
        warm = repo.start_server()
        results: list[dict[str, Any]] = []
        try:
            for name, call, rg_args in CASES:
                code = f"print(len({call}))"
                cmds = {"cold": (repo.run_cmd(code), repo.env("cold", LIMITS)),
                        "rg": ([rg, *rg_args], repo.env("cold"))}
                if warm:
                    cmds["warm"] = (repo.run_cmd(code), repo.env("warm", LIMITS))
                counts = {}
                for key, (cmd, env) in cmds.items():
                    out = subprocess.run(cmd, cwd=repo.repo, env=env, capture_output=True, text=True,
                                         stdin=subprocess.DEVNULL).stdout
                    counts[key] = len(out.splitlines()) if key == "rg" else int(out.strip())
                if len(set(counts.values())) != 1:
                    raise SystemExit(f"{name}: result counts differ: {counts}")
                timed = time_processes(cmds, args.runs, cwd=repo.repo, ok_codes={"rg": (0, 1)},  # 1: no match
                                       servers={"warm": repo.server_pid(LIMITS)} if warm else None)
                results.append({"case": name, "results": counts["rg"], "rg_command": "rg " + " ".join(rg_args),
                                **{k: vars(v) for k, v in timed.items()}, "_timed": timed})
        finally:
            repo.stop_server()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print(f"{args.files} files under {TREE}/ of a stamped repository (written in {setup_s:.1f} s); ripgrep {rg}; "
          f"medians of {args.runs} runs taking turns; {os.cpu_count()} CPUs; whole process trees (a warm run: the "
          "client and the warm server)\n")
    print(TABLE_HEAD)
    for r in results:
        timed = r.pop("_timed")
        label = f"{r['case']} ({r['results']} results)"
        if warm:
            print(row(f"warm: {label}", ms(timed["warm"]), f"{ms(timed['rg'])} `{r['rg_command']}`",
                      timed["warm"].wall_ms / timed["rg"].wall_ms, TARGET))
        else:
            print(na_row(f"warm: {label}", TARGET))
        print(row(f"cold: {label}", ms(timed["cold"]), f"{ms(timed['rg'])} `{r['rg_command']}`",
                  timed["cold"].wall_ms / timed["rg"].wall_ms, None))
    if args.json:
        Path(args.json).write_text(json.dumps({"files": args.files, "runs": args.runs, "rg": rg, "server": warm,
                                               "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
