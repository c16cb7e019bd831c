"""Keeping a program's host loop and its sandbox worker on one CPU (Linux).

Every tool call is a round trip between this process and the Monty worker over a pipe. When the two sides (and the
client's I/O threads) sit on different CPUs, each round trip pays cross-CPU wake-ups; with everything on one CPU it
does not, and the program and the host never compute at the same time (each waits for the other), so sharing a CPU
costs nothing (benchmarks/bench_runtime.py measures a tool call). Tools run with this thread's original CPUs
restored, so what they start (ripgrep, bash, MCP servers) may use every CPU.

Runs at the same time (the warm server's) each get a CPU of their own while there are CPUs to spare: a run takes the
CPU the fewest runs of this process hold now, the one its process id names first (:meth:`OneCpu.pin`). The pool
client's I/O threads, which every run shares, are kept on the CPUs the runs in flight hold.

A tool that starts a process only on some calls (an MCP tool starts its server on the first call) is marked
``in_process``: its calls stay on the run's CPU. The MCP sessions live on their own event-loop thread, made with every
CPU (:func:`all_cpus`), so the servers it starts are not confined to a run's CPU.

``CODEACT_PIN_CPU=0`` turns it off. Elsewhere than Linux, or where the calls are refused, it does nothing.
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from ..processes import comm as _comm
from ..processes import named_children as _children
from ..processes import threads as _threads

# The pool client's I/O threads are shared by every run of this process: the first run to pin them saves their CPUs,
# each run keeps them on the CPUs the runs in flight hold, the last to finish restores them.
_shared_lock = threading.Lock()
_shared: dict[str, dict[int, set[int]]] = {}  # thread name -> {tid: CPUs before the first run pinned it}
_shared_users: dict[str, int] = {}
_held: dict[int, int] = {}  # CPU -> the runs of this process pinned to it now
_pinned: dict[int, OneCpu] = {}  # native thread id -> the OneCpu holding that thread on one CPU (for all_cpus)


class OneCpu:
    """Pins the calling thread, this process's threads named ``threads`` (a pool client's I/O threads, which live
    as long as the process) and the ``worker`` processes started after it was made, to one CPU until
    :meth:`release`. Make it just before the pool; :meth:`pin` once the pool runs, :meth:`pin_workers` again once
    the worker has started its threads."""

    def __init__(self, worker: str, threads: str, enabled: bool = True, warm: bool = False) -> None:
        self._worker, self._thread_name = worker, threads
        self._warm = warm  # a warm pool's worker is named by worker_pid: no scan of /proc for new children
        self._cpu: set[int] | None = None
        self._own: set[int] | None = None
        self._caller: int | None = None
        self._wide = False  # the caller has its own CPUs back for a call (widen), until narrow
        self.worker_pid: int | None = None  # a worker that existed before (a warm pool's), to pin as well
        if not enabled or not hasattr(os, "sched_setaffinity"):
            return
        try:
            own = os.sched_getaffinity(0)
        except OSError:
            return
        if len(own) > 1:
            self._own = own
            self._cpu = {sorted(own)[os.getpid() % len(own)]}  # chosen again at pin(), among the CPUs free then
            self._workers_before = set() if warm else set(_children(os.getpid(), worker))

    def pin(self) -> None:
        """Pin this thread, the client's threads and the pool's worker (only the worker when they are pinned
        already: a second session's, after a type check)."""
        if self._caller is not None:
            self.pin_workers()
            return
        if self._cpu is None:
            return
        self._caller = threading.get_native_id()
        with _shared_lock:
            self._cpu = {_least_held(self._own or self._cpu)}
            if not _set(self._caller, self._cpu):
                self._caller = None
                return
            _held[next(iter(self._cpu))] = _held.get(next(iter(self._cpu)), 0) + 1
            _pinned[self._caller] = self
            me, name = os.getpid(), self._thread_name
            saved = _shared.setdefault(name, {})
            _shared_users[name] = _shared_users.get(name, 0) + 1
            for tid in _threads(me):
                if tid not in saved and _thread_name(me, tid) == name:
                    try:
                        saved[tid] = os.sched_getaffinity(tid)
                    except OSError:
                        continue
            _pin_shared(name)
        self.pin_workers()

    def pin_workers(self) -> None:
        """Pin every thread of the pool's worker (it may start more after it is spawned): the workers started since
        this was made, and :attr:`worker_pid` (a warm pool's worker, checked out for this run)."""
        if self._caller is None:
            return
        mine = {self.worker_pid} if self.worker_pid else set()
        started = set() if self._warm else set(_children(os.getpid(), self._worker)) - self._workers_before
        for child in started | mine:
            for tid in _threads(child):
                _set(tid, self._cpu)

    def widen(self) -> None:
        """Give the calling thread its own CPUs back (around a tool call)."""
        if self._caller is not None and not self._wide:
            self._wide = True
            _set(0, self._own)

    def narrow(self) -> None:
        """Back onto the one CPU after a tool call."""
        if self._caller is not None and self._wide:
            self._wide = False
            _set(0, self._cpu)

    def release(self) -> None:
        """Restore this thread, and the client's threads when no other run of this process still uses them."""
        if self._caller is None:
            return
        _pinned.pop(self._caller, None)
        _set(self._caller, self._own)
        self._caller = None
        self._wide = False
        name = self._thread_name
        with _shared_lock:
            cpu = next(iter(self._cpu or ()), None)
            if cpu is not None and _held.get(cpu):
                _held[cpu] -= 1
                if not _held[cpu]:
                    del _held[cpu]
            _shared_users[name] -= 1
            if _shared_users[name] == 0:
                for tid, cpus in _shared.pop(name, {}).items():
                    _set(tid, cpus)
            else:
                _pin_shared(name)


def _least_held(cpus: set[int]) -> int:
    """The CPU of ``cpus`` the fewest runs hold now; among those, the first from the one this process id names
    (one run at a time keeps the CPU it always had). Called with ``_shared_lock`` held."""
    ordered = sorted(cpus)
    start = os.getpid() % len(ordered)
    ordered = ordered[start:] + ordered[:start]
    return min(ordered, key=lambda cpu: _held.get(cpu, 0))


def _pin_shared(name: str) -> None:
    """The shared threads named ``name`` onto the CPUs the runs in flight hold (with ``_shared_lock`` held)."""
    cpus = set(_held)
    if cpus:
        for tid in _shared.get(name, {}):
            _set(tid, cpus)


@contextlib.contextmanager
def all_cpus() -> Iterator[None]:
    """The calling thread on its own CPUs for the ``with`` block when a run pins it (a process started meanwhile
    inherits them), and back on the run's CPU after; nothing for a thread no :class:`OneCpu` pins, or one already
    widened for the call."""
    pinned = _pinned.get(threading.get_native_id())
    if pinned is None or pinned._wide:
        yield
        return
    pinned.widen()
    try:
        yield
    finally:
        pinned.narrow()


def _set(tid: int, cpus: set[int] | None) -> bool:
    try:
        os.sched_setaffinity(tid, cpus)  # type: ignore[arg-type]
        return True
    except (OSError, TypeError):
        return False  # a thread that ended, or one we may not move



# The names of this process's threads seen so far (tid -> name): a run reads the name of new threads only (a warm
# server has dozens of threads, and a thread's name is a file of /proc to open). Pruned to the threads alive.
_names: dict[int, str] = {}
_names_pid = 0


def _thread_name(pid: int, tid: int) -> str:
    """The name of thread ``tid`` of this process ``pid``, read once per thread."""
    global _names_pid
    if _names_pid != pid:  # a forked child: its threads are not its parent's
        _names.clear()
        _names_pid = pid
    name = _names.get(tid)
    if name is None:
        if len(_names) > 256:
            alive = set(_threads(pid))
            for gone in [t for t in _names if t not in alive]:
                del _names[gone]
        name = _names[tid] = _comm(pid, tid)
    return name
