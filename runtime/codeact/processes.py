"""Processes and threads as Linux's ``/proc`` shows them: is a process running, its children, its threads' names.

Elsewhere than Linux each answers what it can (``os.kill(pid, 0)``) or nothing.
"""
from __future__ import annotations

import os

_TASKS = "/proc/{pid}/task"


def process_running(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited child not yet reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def children() -> set[int]:
    """This process's child processes (empty where ``/proc`` is missing)."""
    me, found = str(os.getpid()).encode(), set[int]()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                found.add(int(entry))
    return found


def named_children(pid: int, name: str) -> list[int]:
    """The children of process ``pid`` whose command name is ``name``."""
    found: list[int] = []
    for tid in threads(pid):
        try:
            with open(f"{_TASKS.format(pid=pid)}/{tid}/children", encoding="ascii") as handle:
                found += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return [child for child in found if comm(child) == name]


def threads(pid: int) -> list[int]:
    """The thread ids of process ``pid``."""
    try:
        return [int(tid) for tid in os.listdir(_TASKS.format(pid=pid))]
    except OSError:
        return []


def comm(pid: int, tid: int | None = None) -> str:
    """The command name of process ``pid`` (of its thread ``tid``); '' when it is gone."""
    try:
        where = f"/proc/{pid}/comm" if tid is None else f"{_TASKS.format(pid=pid)}/{tid}/comm"
        with open(where, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


__all__ = ["children", "comm", "named_children", "process_running", "threads"]
