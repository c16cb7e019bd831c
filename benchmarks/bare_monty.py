"""The floor for a tool call: a bare pydantic-monty loop that answers ``view`` by reading the file, in process.

Run by bench_runtime.py with the launcher's venv Python (the same pydantic-monty the runtime uses):

    python bare_monty.py FILE CALLS ROUNDS

Prints one JSON object: ``view_us`` (per call: a program making CALLS calls minus one making the same loop over a
sandbox-local function, medians of ROUNDS interleaved rounds) and ``trivial_ms`` (feeding ``1`` to a warm pool).
The loop and the worker share one CPU, as codeact's run and worker do.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

import pydantic_monty as pm

LOOP = "n = 0\nfor i in range({calls}):\n    n += len({call}(path={path!r}))\nn"
LOCAL = "def same(path):\n    return 'x' * 30\n"


def drive(pool: pm.Monty, code: str) -> object:
    with pool.checkout(limits={"max_suspensions": 10_000_000}) as session:
        _pin(session.worker_pid)
        snap = session.feed_start(code)
        while not isinstance(snap, pm.MontyComplete):
            if isinstance(snap, pm.NameLookupSnapshot):
                snap = snap.resume()
                continue
            assert isinstance(snap, pm.FunctionSnapshot)
            with open(snap.kwargs["path"], encoding="utf-8") as f:  # what a real view does at its core
                answer: Any = {"return_value": f.read()}
            snap = snap.resume(answer)
        return snap.output


def _pin(worker: int | None) -> None:
    """Every thread of this process (the pool client's I/O threads too) and of the sandbox's worker on one CPU, as
    codeact pins a run's round trips (codeact.backends.cpu): the floor pays no more cross-CPU wake-ups than codeact
    does. (Pinning only this thread and the worker's first leaves the I/O threads free: ~3x slower a call on 2 CPUs,
    a floor codeact would beat.)"""
    if not worker or not hasattr(os, "sched_setaffinity"):
        return
    cpu = {min(os.sched_getaffinity(0))}
    for pid in (os.getpid(), worker):
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            threads = [str(pid)]
        for tid in threads:
            try:
                os.sched_setaffinity(int(tid), cpu)
            except OSError:
                pass  # a thread that ended


def main() -> int:
    path, calls, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    view = LOOP.format(calls=calls, call="view", path=path)
    local = LOCAL + LOOP.format(calls=calls, call="same", path=path)
    views, locals_, trivial = [], [], []
    with pm.Monty(max_processes=1) as pool:
        drive(pool, view)  # warm
        for _ in range(rounds):
            t0 = time.perf_counter()
            drive(pool, view)
            t1 = time.perf_counter()
            drive(pool, local)
            t2 = time.perf_counter()
            drive(pool, "1")
            t3 = time.perf_counter()
            views.append(t1 - t0)
            locals_.append(t2 - t1)
            trivial.append(t3 - t2)
    per_call = (statistics.median(views) - statistics.median(locals_)) / calls
    print(json.dumps({"view_us": per_call * 1e6, "trivial_ms": statistics.median(trivial) * 1e3}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
