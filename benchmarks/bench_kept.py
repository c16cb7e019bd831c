"""What the runtime kept only for speed, measured with and without each piece on the user's path, side by side.

One repository is stamped by the real ``copier copy`` from the working tree (benchmarks/userpath.py) and copied once
per piece with the piece put back (one removed: its files as :data:`REF` has them) or taken out (one kept: the
plain replacement under benchmarks/kept/); every copy is timed in turns through its stamped launcher, each with
its own warm server:

  warm trivial run                    `codeact run --code 1`, warm                        <= 50 ms
  cold trivial run                    the same, cold (CODEACT_SERVER=0)                   <= 300 ms
  warm run after a settings change    .codeact/settings.json rewritten (same content)     <= 50 ms
                                      before each run: the server checks its inputs again
  run after a runtime change          a runtime file's times moved before each run: the   <= 300 ms
                                      server sees it and a fresh one serves the run

A piece stays only where a budget fails without it and holds with it, by more than the runs' noise (the verdicts
under the table). Wall time on
a loaded machine fails every budget with and without a piece; the CPU time of the run's processes (the client's
and the warm server's) is what load stretches least.

    python benchmarks/bench_kept.py [--runs 7]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from userpath import ROOT, Timing, UserRepo, machine_load, scratch, stamp_repo, time_processes  # noqa: E402

REF = "ef7129f"  # main before issue 46.1 took inotify out


@dataclass(frozen=True)
class Piece:
    """A piece of the runtime kept for speed: whether the working tree has it, and the runtime files (below
    runtime/codeact/) that make the tree the other way: ``git show`` of a ``REV:path``, or a file appended to the
    tree's (under benchmarks/kept/)."""

    in_tree: bool
    other: dict[str, str]


PIECES: dict[str, Piece] = {
    "the thin client's own argparse clone (`codeact.cmdline`)":
        Piece(True, {"cmdline.py": "append:kept/cmdline_argparse.py"}),
    "inotify through ctypes (`codeact.server.confighash`)":
        Piece(False, {"server/confighash.py": f"{REF}:runtime/codeact/server/confighash.py"}),
}
TREE = "the working tree"
WARM_MS, COLD_MS = 50.0, 300.0
RUNTIME = Path(".codeact") / "runtime" / "codeact"
HERE = Path(__file__).resolve().parent


def other_way(base: UserRepo, dest: Path, piece: Piece) -> UserRepo:
    """A copy of the stamped repository ``base`` at ``dest`` whose runtime has ``piece`` the other way round."""
    shutil.copytree(base.repo, dest, symlinks=True)
    for name, source in piece.other.items():
        target = dest / RUNTIME / name
        if source.startswith("append:"):
            target.write_bytes(target.read_bytes() + b"\n\n" + (HERE / source.removeprefix("append:")).read_bytes())
        else:
            target.write_bytes(subprocess.run(["git", "show", source], cwd=ROOT, check=True,
                                              capture_output=True).stdout)
    return replace(base, repo=dest)


def timed_after(repos: dict[str, UserRepo], change: Callable[[UserRepo, int], None], runs: int,
                mode: str) -> dict[str, Timing]:
    """Median wall time of a trivial run right after ``change(repo, i)``, the repositories taking turns."""
    walls: dict[str, list[float]] = {name: [] for name in repos}
    for i in range(runs + 1):
        for name, repo in repos.items():
            change(repo, i)
            started = time.perf_counter()
            done = subprocess.run(repo.run_cmd("1"), cwd=repo.repo, env=repo.env(mode), capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=300)
            wall = (time.perf_counter() - started) * 1000
            if done.returncode != 0 or done.stdout.strip() != b"1":
                raise SystemExit(f"{name}: run failed ({done.returncode}): {done.stderr.decode()[-800:]}")
            if i:  # the first round warms caches
                walls[name].append(wall)
    return {name: Timing(statistics.median(w), 0.0, w) for name, w in walls.items()}


def rewrite_settings(repo: UserRepo, _i: int) -> None:
    settings = repo.repo / ".codeact" / "settings.json"
    settings.write_bytes(settings.read_bytes())  # same content, a new change time: the server reads it again


def touch_runtime(repo: UserRepo, i: int) -> None:
    module = repo.repo / RUNTIME / "core" / "hints.py"
    os.utime(module, ns=(time.time_ns(), time.time_ns() + i))  # a new stamp of the runtime: a fresh server


def significant(kept: Timing, gone: Timing) -> bool:
    """Whether ``gone`` is slower than ``kept`` by more than twice the spread of their runs (the larger median
    absolute deviation of the two): a smaller difference is the machine's noise."""
    spread = max(statistics.median(abs(w - t.wall_ms) for w in t.samples) for t in (kept, gone))
    return gone.wall_ms - kept.wall_ms > 2 * spread


def shown(timing: Timing) -> str:
    """Wall time, and the CPU time of the processes the run took where it was measured."""
    return f"{timing.wall_ms:.1f} ms" + (f" (CPU {timing.cpu_ms:.1f})" if timing.cpu_ms else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (median)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    root = scratch("codeact-bench-kept-")
    repos: dict[str, UserRepo] = {}
    try:
        base = stamp_repo(root / "tree")
        if not base.server:
            raise SystemExit("this runtime has no warm server: the warm budgets cannot be measured")
        repos[TREE] = base
        for number, (name, piece) in enumerate(PIECES.items()):
            repos[name] = other_way(base, root / f"piece{number}" / "repo", piece)
        load_before = machine_load()
        for repo in repos.values():
            repo.start_server()
        folders = {name: r.repo for name, r in repos.items()}
        warm = time_processes({name: (r.run_cmd("1"), r.env("warm")) for name, r in repos.items()}, args.runs,
                              cwd=root, cwds=folders, check_out=dict.fromkeys(repos, "1"),
                              servers={name: r.server_pid() for name, r in repos.items()})
        cold = time_processes({name: (r.run_cmd("1"), r.env("cold")) for name, r in repos.items()}, args.runs,
                              cwd=root, cwds=folders, check_out=dict.fromkeys(repos, "1"))
        settings = timed_after(repos, rewrite_settings, args.runs, "warm")
        runtime = timed_after(repos, touch_runtime, args.runs, "warm")
        load_after = machine_load()
    finally:
        for repo in repos.values():
            repo.stop_server()
        shutil.rmtree(root, ignore_errors=True)

    measures = [("warm trivial run", warm, WARM_MS), ("cold trivial run", cold, COLD_MS),
                ("warm run after a settings change", settings, WARM_MS),
                ("run after a runtime change (a fresh server)", runtime, COLD_MS)]
    print(f"One run of `python benchmarks/bench_kept.py` ({time.perf_counter() - started:.0f} s): the stamped "
          f"launcher, a copy of the stamped repository per piece, that piece the other way round, all taking turns; "
          f"medians of {args.runs} runs, wall time; {load_before} at the start, {load_after} at the end (a loaded "
          "machine stretches every figure; the difference between the columns is what the piece saves, CPU: the client's "
          "processes and the warm server's).\n")
    print("| piece | on the user's path | with it | without it | it saves | budget | without it |")
    print("|---|---|---:|---:|---:|---:|---|")
    verdicts = []
    for name, piece in PIECES.items():
        with_it, without_it = (TREE, name) if piece.in_tree else (name, TREE)
        held, both = [], []
        for measure, figures, budget in measures:
            kept, gone = figures[with_it], figures[without_it]
            if gone.wall_ms > budget and kept.wall_ms <= budget and significant(kept, gone):
                held.append(measure)
            elif gone.wall_ms > budget:
                both.append(f"{measure} ({gone.wall_ms - kept.wall_ms:+.1f} ms without it"
                            + (f", CPU {gone.cpu_ms - kept.cpu_ms:+.1f} ms" if gone.cpu_ms else "") + ")")
            print(f"| {name} | {measure} | {shown(kept)} | {shown(gone)} | {gone.wall_ms - kept.wall_ms:+.1f} ms | "
                  f"<= {budget:g} ms | {'PASS' if gone.wall_ms <= budget else 'FAIL'} |")
        verdicts.append(f"- {name}: " + (f"holds {', '.join(held)}" if held else
                                         f"fails with it too at this load: {'; '.join(both)}" if both else
                                         "no budget fails without it"))
    print("\n" + "\n".join(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
