"""Keeping a program's host loop and its sandbox worker on one CPU (Linux).

Every tool call is a round trip between this process and the Monty worker over a pipe. When the two sides (and the
client's I/O threads) sit on different CPUs, each round trip pays cross-CPU wake-ups: 130 µs a call measured on a
2-CPU virtual machine, 32 µs with everything on one CPU. The program and the host never compute at the same time
(each waits for the other), so sharing a CPU costs nothing. Tools run with this thread's original CPUs restored, so
what they start (ripgrep, bash, MCP servers) may use every CPU.

``CODEACT_PIN_CPU=0`` turns it off. Elsewhere than Linux, or where the calls are refused, it does nothing.
"""
from __future__ import annotations

import os
import threading

_TASKS = "/proc/{pid}/task"


class OneCpu:
    """Pins the calling thread, this process's threads named ``threads`` (a pool client's I/O threads, which live
    as long as the process) and the ``worker`` processes started after it was made, to one CPU until
    :meth:`release`. Make it just before the pool, :meth:`pin` once the pool runs."""

    def __init__(self, worker: str, threads: str, enabled: bool = True) -> None:
        self._worker, self._thread_name = worker, threads
        self._saved: dict[int, set[int]] = {}
        self._cpu: set[int] | None = None
        self._own: set[int] | None = None
        if not enabled or not hasattr(os, "sched_setaffinity"):
            return
        try:
            own = os.sched_getaffinity(0)
        except OSError:
            return
        if len(own) > 1:
            self._own = own
            self._cpu = {sorted(own)[os.getpid() % len(own)]}  # concurrent runs spread over the CPUs
            self._workers_before = set(_children(os.getpid(), worker))

    def pin(self) -> None:
        """Pin this thread and what the pool started."""
        if self._cpu is None:
            return
        me = os.getpid()
        ours = {threading.get_native_id(), *(t for t in _threads(me) if _comm(me, t) == self._thread_name)}
        workers = set(_children(me, self._worker)) - self._workers_before
        theirs = [tid for child in workers for tid in _threads(child)]
        for tid in (*ours, *theirs):
            try:
                if tid in ours:
                    self._saved.setdefault(tid, os.sched_getaffinity(tid))
                os.sched_setaffinity(tid, self._cpu)
            except OSError:
                continue  # a thread that ended, or one we may not move

    def widen(self) -> None:
        """Give the calling thread its own CPUs back (around a tool call)."""
        self._move(self._own)

    def narrow(self) -> None:
        """Back onto the one CPU after a tool call."""
        self._move(self._cpu)

    def _move(self, cpus: set[int] | None) -> None:
        if self._saved and cpus:
            try:
                os.sched_setaffinity(0, cpus)
            except OSError:
                pass

    def release(self) -> None:
        """Restore this process's threads; the worker's go with the worker."""
        for tid, cpus in self._saved.items():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                continue
        self._saved.clear()


def _threads(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(_TASKS.format(pid=pid))]
    except OSError:
        return []


def _children(pid: int, name: str) -> list[int]:
    found: list[int] = []
    for tid in _threads(pid):
        try:
            with open(f"{_TASKS.format(pid=pid)}/{tid}/children", encoding="ascii") as handle:
                found += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return [child for child in found if _comm(child) == name]


def _comm(pid: int, tid: int | None = None) -> str:
    try:
        where = f"/proc/{pid}/comm" if tid is None else f"{_TASKS.format(pid=pid)}/{tid}/comm"
        with open(where, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""
