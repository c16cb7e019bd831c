"""The user-path benchmarks (bench_runtime, bench_mcp, bench_search): each quick mode runs once and prints its rows.

The figures are not asserted (a shared machine decides them); the rows, targets and verdicts are: every row with a
target has PASS/FAIL, or says the runtime has no server (warm rows only).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.run_all import BENCHMARKS, SECTIONS, headline_rows
from benchmarks.userpath import NO_SERVER, Timing, row, time_processes, tree_cpu

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def quick(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH / script), "--quick", *args], capture_output=True, text=True,
                          timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def table_rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| measurement |") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def assert_verdicts(rows: dict[str, list[str]], names: list[str]) -> None:
    for name in names:
        match = [cells for label, cells in rows.items() if label.startswith(name) and cells[4] != "(info)"]
        assert match, f"no row {name!r} with a target in {list(rows)}"
        for cells in match:
            target, verdict = cells[4], cells[5]
            assert re.fullmatch(r"<= [0-9.]+x", target), cells
            if NO_SERVER in cells[1]:
                assert name.startswith("warm"), cells  # only warm rows may lack a measurement
            else:
                assert (verdict in ("PASS", "FAIL") and re.fullmatch(r"[0-9.]+x", cells[3])
                        or verdict == "NOISE" and cells[3].startswith("noise (-")), cells


def test_row_judges_the_ratio_against_the_target() -> None:
    assert row("a", "1", "2", 1.5, 1.5).endswith("| 1.50x | <= 1.5x | PASS |")
    assert row("a", "1", "2", 1.51, 1.5).endswith("| 1.51x | <= 1.5x | FAIL |")
    assert row("a", "1", "2", 2.0, None).endswith("| 2.00x | (info) |  |")
    assert row("a", "-5", "2", -2.5, 1.5).endswith("| noise (-2.50) | <= 1.5x | NOISE |")  # never a PASS


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


@pytest.mark.slow
def test_bench_runtime_quick_prints_start_up_and_per_call_rows() -> None:
    out = quick("bench_runtime.py", "--no-peers")
    rows = table_rows(out)
    assert_verdicts(rows, ["warm trivial run", "cold trivial run (`CODEACT_SERVER=0`)",
                           "cold trivial run, allowance", "cold: real `view`", "warm: real `view`"])
    assert any(label.startswith("cold: `grep`") for label in rows)
    assert any(label.startswith("cold: MCP `echo`") for label in rows)
    assert "bare pydantic-monty loop" in rows[next(k for k in rows if k.startswith("cold: real `view`"))][2]
    assert re.search(r"load average [\d.]+ \(1 min\).* on \d+ CPUs at the start", out), "the load is said"


@pytest.mark.slow
def test_bench_runtime_peers_rows_where_the_peer_venvs_are_cached() -> None:
    sys.path.insert(0, str(BENCH))  # peers.py imports its sibling userpath as the scripts do
    import peers

    if not all((peers.CACHE / key / ".bench-requirement").exists() for key in peers.PEERS):
        pytest.skip("the PyPI peers are not installed under .ci-cache/bench-peers (bench_runtime.py installs them)")
    rows = table_rows(quick("bench_runtime.py"))
    for label, _ in peers.PEERS.values():
        assert_verdicts(rows, [f"start-up: codeact cold trivial run against {label}",
                               f"per `view` call: codeact cold against {label}"])
    # without its source (GitHub-only) the seed's row says how to measure it, instead of a figure recorded elsewhere
    seed = [cells for label, cells in rows.items() if "seed" in label]
    assert seed and all("--seed PATH" in " ".join(cells) for cells in seed), seed


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


@pytest.mark.slow
def test_bench_mcp_quick_prints_one_tool_per_call_and_discovery_rows() -> None:
    rows = table_rows(quick("bench_mcp.py"))
    assert_verdicts(rows, ["warm run calling one MCP tool", "cold: MCP `echo` per call", "warm: MCP `echo` per call",
                           "`codeact discover`, 5 servers"])
    for label in ("cold run calling one MCP tool (SDK import", "cold run calling one MCP tool, against a whole direct SDK",
                  "cold run calling one MCP tool, against a whole raw stdlib"):
        assert any(k.startswith(label) for k in rows), label


@pytest.mark.slow
def test_bench_search_quick_prints_every_case_warm_and_cold() -> None:
    rows = table_rows(quick("bench_search.py"))
    cases = ["grep TODO", "grep `import os` in *.py", "grep -i, no match", "glob **/*.py"]
    assert_verdicts(rows, [f"warm: {case}" for case in cases])
    for case in cases:
        cold = next(cells for label, cells in rows.items() if label.startswith(f"cold: {case}"))
        assert re.search(r"\((\d+) results\)", cold[0]) and "`rg " in cold[2]


def test_the_headline_takes_each_rows_own_verdict_not_its_rounded_ratio() -> None:
    """A ratio of 1.502 shows as ``1.50x`` and fails ``<= 1.5x`` in its table: the README headline says NO too."""
    table = "\n".join([
        "| measurement | measured | baseline | ratio | target | verdict |",
        "|---|---:|---:|---:|---|---|",
        row("glob", "60 ms", "40 ms", 1.502, 1.5),
        row("grep", "50 ms", "40 ms", 1.25, 1.5),
        row("info", "1 ms", "1 ms", 3.0, None),
    ])
    assert headline_rows(table) == {"<= 1.5x": (2, "1.50x", False)}
    passing = "\n".join([row("grep", "50 ms", "40 ms", 1.25, 1.5), row("glob", "55 ms", "40 ms", 1.375, 1.5)])
    assert headline_rows(passing) == {"<= 1.5x": (2, "1.38x", True)}
