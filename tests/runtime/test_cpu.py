"""The monty backend keeps its worker and this process on one CPU while a program runs (backends.cpu).

Tool calls that start processes get every CPU back for the call, so ripgrep and bash still run in parallel; the
caller's CPUs are restored when the run ends; CODEACT_PIN_CPU=0 turns it off.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from codeact.backends import cpu as cpu_module
from codeact.backends.cpu import OneCpu
from codeact.core.config import Settings
from codeact.core.tool import tool_from_function
from codeact.runner import run

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="CPU pinning needs Linux and at least two CPUs this process may use")


def _affinity_tools(seen: dict[str, set[int]]) -> dict:
    def cpus_here() -> int:
        """The number of CPUs the calling thread may use."""
        seen["in_process"] = os.sched_getaffinity(0)
        for tid in _io_threads():  # the pool client's I/O threads, which outlive a run
            try:
                seen.setdefault("io_threads", set()).update(os.sched_getaffinity(tid))
            except OSError:
                pass  # it ended meanwhile
        return len(seen["in_process"])

    def cpus_for_children() -> int:
        """The number of CPUs a process started now would get."""
        out = subprocess.run([sys.executable, "-S", "-c", "import os; print(len(os.sched_getaffinity(0)))"],
                             capture_output=True, text=True, check=True).stdout
        seen["child"] = set(range(int(out)))
        return int(out)

    here = tool_from_function(cpus_here, source="user")._replace(in_process=True)
    return {"cpus_here": here, "cpus_for_children": tool_from_function(cpus_for_children, source="user")}


def _io_threads() -> list[int]:
    """This process's threads named ``tokio-rt-worker`` (the pool client's I/O threads); one that ends while the
    folder is read is left out (another thread of the process, a run's, may end at any moment)."""
    found = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                if comm.read().strip() == "tokio-rt-worker":
                    found.append(int(tid))
        except FileNotFoundError:
            continue
    return found


def _run(code: str, tmp_path, seen, **env: str):
    environ = {"CODEACT_CONFIG_DIR": str(tmp_path / "config"), "PATH": os.environ.get("PATH", ""), **env}
    return run(code, workspace=tmp_path, backend="monty", tools=_affinity_tools(seen), settings=Settings(),
               environ=environ)


@pytest.mark.parametrize("runs", [1, 2], ids=["first-run", "second-run-in-the-process"])
def test_a_run_pins_in_process_tools_and_frees_process_starting_ones(tmp_path, runs):
    before = os.sched_getaffinity(0)
    for _ in range(runs):
        seen: dict[str, set[int]] = {}
        result = _run("[cpus_here(), cpus_for_children(), cpus_here()]", tmp_path, seen)
        assert result.ok, result.error
        assert result.result == [1, len(before), 1]
        assert seen["io_threads"] == seen["in_process"]  # on the same one CPU
        assert os.sched_getaffinity(0) == before  # restored when the run ends


def test_pinning_can_be_turned_off(tmp_path):
    before = os.sched_getaffinity(0)
    seen: dict[str, set[int]] = {}
    result = _run("cpus_here()", tmp_path, seen, CODEACT_PIN_CPU="0")
    assert result.ok and result.result == len(before)


def test_one_cpu_pins_named_children_and_restores_this_process():
    before = os.sched_getaffinity(0)
    earlier = subprocess.Popen(["sleep", "30"])  # started before: another pool's worker, left alone
    for _ in range(100):  # /proc lists a new child a moment after it starts
        if earlier.pid in cpu_module._children(os.getpid(), "sleep"):
            break
        time.sleep(0.01)
    cpu = OneCpu("sleep", threads="no-such-thread")
    child = subprocess.Popen(["sleep", "30"])
    other = subprocess.Popen(["cat"], stdin=subprocess.PIPE)  # not named as the worker: left alone
    try:
        time.sleep(0.05)
        cpu.pin()
        (only,) = os.sched_getaffinity(0)
        assert os.sched_getaffinity(child.pid) == {only}
        assert os.sched_getaffinity(other.pid) == before
        assert os.sched_getaffinity(earlier.pid) == before
        cpu.widen()
        assert os.sched_getaffinity(0) == before
        cpu.narrow()
        assert os.sched_getaffinity(0) == {only}
        cpu.release()
        assert os.sched_getaffinity(0) == before
    finally:
        for proc in (earlier, child, other):
            proc.kill()
            proc.wait()


def test_one_cpu_disabled_changes_nothing():
    before = os.sched_getaffinity(0)
    cpu = OneCpu("monty", "tokio-rt-worker", enabled=False)
    cpu.pin()
    cpu.narrow()
    assert os.sched_getaffinity(0) == before
    cpu.release()


def test_overlapping_runs_in_one_process_restore_the_shared_threads(tmp_path):
    before = os.sched_getaffinity(0)

    def nap() -> int:
        """Sleep a little, so that two runs overlap."""
        time.sleep(0.3)
        return 1

    tools = {"nap": tool_from_function(nap, source="user")._replace(in_process=True)}
    environ = {"CODEACT_CONFIG_DIR": str(tmp_path / "config"), "PATH": os.environ.get("PATH", "")}
    results: list = []

    def one(delay: float) -> None:
        time.sleep(delay)
        results.append(run("nap() + nap()", workspace=tmp_path, backend="monty", tools=tools, settings=Settings(),
                           environ=environ))

    threads = [threading.Thread(target=one, args=(delay,)) for delay in (0.0, 0.2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.result for r in results] == [2, 2], [r.error for r in results]
    shared = _io_threads()
    assert shared and all(os.sched_getaffinity(t) == before for t in shared)


def test_concurrent_runs_land_on_different_cpus_and_a_single_run_keeps_its_cpu(tmp_path):
    """Issue 44.3: runs in flight at the same time (the warm server's) each get a CPU of their own while there are
    CPUs to spare; one run alone stays on the CPU its process id names."""
    own = os.sched_getaffinity(0)
    barrier = threading.Barrier(2, timeout=60)
    seen: dict[str, set[int]] = {}

    def where(label: str) -> int:
        """Wait until both runs are in flight, then note the CPUs this run's thread may use."""
        barrier.wait()
        seen[label] = os.sched_getaffinity(0)
        barrier.wait()
        return len(seen[label])

    tools = {"where": tool_from_function(where, source="user")._replace(in_process=True)}
    environ = {"CODEACT_CONFIG_DIR": str(tmp_path / "config"), "PATH": os.environ.get("PATH", "")}
    results = {}

    def one(label: str) -> None:
        results[label] = run(f"where(label={label!r})", workspace=tmp_path, backend="monty", tools=tools,
                             settings=Settings(), environ=environ)

    threads = [threading.Thread(target=one, args=(label,)) for label in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert all(r.ok and r.result == 1 for r in results.values()), results
    assert seen["a"] != seen["b"] and seen["a"] | seen["b"] <= own
    alone = threading.Barrier(1)
    barrier = alone  # one party: the single run does not wait
    result = run("where(label='alone')", workspace=tmp_path, backend="monty", tools=tools, settings=Settings(),
                 environ=environ)
    assert result.ok, result.error
    assert seen["alone"] == {sorted(own)[os.getpid() % len(own)]}
