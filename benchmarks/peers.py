"""The PyPI peers, installed into benchmark venvs and measured side by side with codeact (bench_runtime.py).

Each peer gets its own venv under ``.ci-cache/bench-peers/NAME`` (reused while its pinned requirement is the same);
where PyPI cannot be reached the rows say so and the benchmark goes on. The seed implementation is GitHub-only and
needs pydantic-monty 0.0.17: it is not runnable here, and its row says so (no recorded figure is shown).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

from userpath import ROOT, TABLE_HEAD, Timing, ms, row, time_processes

HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".ci-cache" / "bench-peers"
PEERS = {  # key -> (label, pip requirement)
    "afm": ("agent-framework-monty", "agent-framework-monty==1.0.0b261015"),
    "pah": ("pydantic-ai-harness CodeMode", "pydantic-ai-harness[code-mode]==0.62.0"),
}
# The seed is not runnable here: its codeact.py is on GitHub only (not vendored, and this machine reaches no GitHub)
# and runs only on pydantic-monty 0.0.17. Its row says so; no recorded figure stands in for a measurement.
SEED_ROW = ("| the seed's `codeact.py` | not measured | not measured | not runnable here: its source is GitHub-only "
            "(not vendored) and needs pydantic-monty 0.0.17 |")
TARGET = 1.0  # ahead of the peers: codeact / peer <= 1x


def ensure(key: str) -> Path | str:
    """The peer's venv Python, installing it first if needed; a reason string where it cannot be installed."""
    label, requirement = PEERS[key]
    folder = CACHE / key
    stamp, python = folder / ".bench-requirement", folder / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text() == requirement:
        return python
    try:
        venv.create(folder, with_pip=True, clear=True)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               requirement], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"skipped: could not install {requirement} ({exc})"
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        return f"skipped: could not install {requirement} from PyPI (unreachable?): {tail[0][:200]}"
    stamp.write_text(requirement)
    return python


def per_call(python: Path, key: str, small: Path, calls: int, runs: int) -> dict[str, float]:
    for _attempt in range(2):  # a peer's run killed on a loaded machine (no stderr) gets one more try
        done = subprocess.run([str(python), str(HERE / "peer_run.py"), key, "calls", str(small), str(calls),
                               str(runs)], capture_output=True, text=True, timeout=600)
        if done.returncode == 0:
            break
    if done.returncode != 0:
        raise SystemExit(f"{PEERS[key][0]} per-call run failed (exit {done.returncode}): {done.stderr[-800:]}")
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def rows(scratch: Path, *, calls: int, runs: int, ours_start: dict[str, Timing], ours_view_us: dict[str, float]
         ) -> list[str]:
    """Markdown lines: the peers' figures, and codeact's (per mode: ``cold``, ``warm`` where measured) against each
    peer (target: ahead, <= 1x)."""
    scratch.mkdir(parents=True, exist_ok=True)
    small = scratch / "small.py"
    small.write_text("def f(x):\n    return x + 1\n")
    found: dict[str, tuple[Timing, dict[str, float]]] = {}
    skipped: list[str] = []
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "LANG": "C.UTF-8"}
    for key in PEERS:
        python = ensure(key)
        if isinstance(python, str):
            skipped.append(f"- {PEERS[key][0]}: {python}")
            continue
        start = time_processes({key: ([str(python), str(HERE / "peer_run.py"), key, "trivial"], env)}, runs,
                               cwd=scratch, check_out={key: "1"})[key]
        found[key] = (start, per_call(python, key, small, min(calls, 2000), max(3, runs)))
    modes = [m for m in ("cold", "warm") if m in ours_start and m in ours_view_us]
    lines = ["| implementation | trivial run, whole process | per `view` call (wall) | note |", "|---|---:|---:|---|"]
    lines += [f"| codeact, {m} (this run) | {ms(ours_start[m])} | {ours_view_us[m]:.0f} µs | through the launcher |"
              for m in modes]
    for key, (start, call) in found.items():
        lines.append(f"| {PEERS[key][0]} ({PEERS[key][1].split('==')[1]}, this run) | {ms(start)} | "
                     f"{call['view_us']:.0f} µs (CPU {call['view_cpu_us']:.0f}) | in process, async tools |")
    lines += [SEED_ROW, "", TABLE_HEAD]
    for key, (start, call) in found.items():
        label = PEERS[key][0]
        for m in modes:
            lines.append(row(f"start-up: codeact {m} trivial run against {label}", ms(ours_start[m]), ms(start),
                             ours_start[m].wall_ms / start.wall_ms, TARGET))
            lines.append(row(f"per `view` call: codeact {m} against {label}", f"{ours_view_us[m]:.0f} µs",
                             f"{call['view_us']:.0f} µs", ours_view_us[m] / call["view_us"], TARGET))
    return lines + ([""] + skipped if skipped else [])


if __name__ == "__main__":
    sys.exit("run benchmarks/bench_runtime.py (it measures the peers side by side with codeact)")
