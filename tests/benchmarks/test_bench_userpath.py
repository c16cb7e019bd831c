"""The user-path benchmark machinery: userpath (timing whole process trees), peers (the seed), run_all."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.run_all import BENCHMARKS, SECTIONS
from benchmarks.userpath import Timing, time_processes, tree_cpu

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def table_rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith(("| measurement |", "| budget |", "|---")):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def test_a_process_that_prints_the_wrong_answer_is_not_a_measurement(tmp_path: Path) -> None:
    cmd = [sys.executable, "-S", "-c", "print(41)"]
    got = time_processes({"x": (cmd, {})}, 1, cwd=tmp_path, check_out={"x": "41"})
    assert isinstance(got["x"], Timing) and got["x"].wall_ms > 0 and len(got["x"].samples) == 1
    with pytest.raises(SystemExit, match="expected '42'"):
        time_processes({"x": (cmd, {})}, 1, cwd=tmp_path, check_out={"x": "42"})
    with pytest.raises(SystemExit, match="failed"):
        time_processes({"x": ([sys.executable, "-S", "-c", "raise SystemExit(1)"], {})}, 1, cwd=tmp_path)


# a "server": a parent that sleeps, with a child that burns CPU only while the file `go` exists
_SERVER = """import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import os, time\\nwhile not os.path.exists('stop'):\\n    if os.path.exists('go'):\\n        sum(range(10000))\\n    else:\\n        time.sleep(0.005)"])
print(child.pid, flush=True)
child.wait()
"""


def test_the_servers_process_tree_counts_in_a_runs_cpu(tmp_path: Path) -> None:
    """A warm run's work happens in the server's tree (its workers): time_processes must count it, not only the
    thin client (RESULTS.md once did)."""
    server = subprocess.Popen([sys.executable, "-c", _SERVER], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip()
        work = [sys.executable, "-S", "-c", "import os, time; open('go', 'w').close(); time.sleep(0.4); "
                "os.unlink('go')"]
        before = tree_cpu(server.pid)
        counted = time_processes({"warm": (work, {})}, 1, cwd=tmp_path, servers={"warm": server.pid})["warm"]
        spent_ms = (tree_cpu(server.pid) - before) * 1000 / 2  # a round: two rounds ran (the first is dropped)
        client_only = time_processes({"warm": (work, {})}, 1, cwd=tmp_path)["warm"]
        assert spent_ms > 20, "the server's tree worked during the runs"
        assert counted.cpu_ms >= client_only.cpu_ms + spent_ms / 2, (counted, client_only, spent_ms)
    finally:
        (tmp_path / "stop").write_text("")
        server.wait(timeout=30)


def test_run_all_takes_its_sections_from_one_list() -> None:
    assert [s.name for s in SECTIONS] == list(BENCHMARKS)
    for section in SECTIONS:
        assert (BENCH / section.full[0]).is_file() and (BENCH / section.quick[0]).is_file(), section


FAKE_SEED = '''import argparse, json
ap = argparse.ArgumentParser()
ap.add_argument("--auto", action="store_true")
ap.add_argument("--workspace")
ap.add_argument("--code")
args = ap.parse_args()
out = []
def view(path):
    return open(path).read()
exec(args.code, {"view": view, "print": lambda *a: out.append(" ".join(map(str, a)) + "\\n")})
print(json.dumps({"stdout": "".join(out)%s, "success": True}, indent=2))
'''


def test_the_seed_is_measured_as_its_users_ran_it_and_its_answers_are_checked(tmp_path: Path) -> None:
    """The seed's harness (its CLI: --auto --workspace --code, JSON out) measured through a stand-in with the same
    command line: a whole process per program, its answers checked, so one that stops early is no measurement."""
    sys.path.insert(0, str(BENCH))
    import peers

    small = tmp_path / "small.py"
    small.write_text("def f(x):\n    return x + 1\n")
    seed = tmp_path / "codeact.py"
    seed.write_text(FAKE_SEED % "")
    start, call = peers.seed_figures(Path(sys.executable), seed, small, calls=20_000, runs=1)
    assert start.wall_ms > 0 and call["view_us"] > 0, (start, call)
    seed.write_text(FAKE_SEED % ".replace('0', '1')")  # a wrong count
    with pytest.raises(SystemExit, match="expected"):
        peers.seed_figures(Path(sys.executable), seed, small, calls=20_000, runs=1)
