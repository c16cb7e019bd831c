"""Processes and threads as Linux's ``/proc`` shows them: is a process running, its children, its threads' names.

Elsewhere than Linux each answers what it can (``os.kill(pid, 0)``) or nothing. :func:`communicate_bounded` reads a
child's output up to a bound (a child may write far more than the host should hold).
"""
# Imports inside functions are lazy: subprocess and threading load only where a child is read (start-up cost).
from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    import threading
    from typing import Any

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


class OutputTooLong(Exception):
    """A process wrote more than its reader takes (:func:`communicate_bounded`)."""


def communicate_bounded(process: subprocess.Popen[bytes], limit: int, timeout: float,
                        data: bytes | None = None) -> tuple[bytes, bytes]:
    """``process``'s stdout and stderr (each a pipe or ``None``), ``data`` written to its stdin first (a pipe),
    reading at most ``limit`` bytes of each: :class:`OutputTooLong` once one passes it (nothing more is read, so
    the host never holds more than that), ``subprocess.TimeoutExpired`` past ``timeout`` seconds. In either case
    the caller kills the process (and what it started), then waits for it; the reading threads end at its pipes'
    end."""
    import subprocess
    import threading
    import time

    end = time.monotonic() + max(timeout, 0.0)
    over = threading.Event()
    got: dict[int, list[bytes]] = {}
    threads = []
    if data is not None and process.stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(process.stdin, data), daemon=True))
    readers = []
    for index, stream in enumerate((process.stdout, process.stderr)):
        if stream is not None:
            got[index] = []
            readers.append(threading.Thread(target=_pump, args=(stream, got[index], limit, over), daemon=True))
    for thread in (*threads, *readers):
        thread.start()
    for thread in readers:
        thread.join(max(0.0, end - time.monotonic()))
        if over.is_set():
            raise OutputTooLong(f"more than {limit:,} bytes")
        if thread.is_alive():
            raise subprocess.TimeoutExpired(process.args, timeout)
    try:
        process.wait(max(0.0, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(process.args, timeout) from None
    return b"".join(got.get(0, ())), b"".join(got.get(1, ()))


def _pump(stream: Any, into: list[bytes], limit: int, over: threading.Event) -> None:
    """:func:`communicate_bounded`'s reader: ``stream`` into ``into`` up to ``limit`` bytes (``over`` set past)."""
    total = 0
    try:
        while not over.is_set():
            chunk = stream.read1(1 << 16)
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                over.set()
                return
            into.append(chunk)
    except (OSError, ValueError):  # the pipe closed under it
        return


def _feed(stream: Any, payload: bytes) -> None:
    """:func:`communicate_bounded`'s writer: ``payload`` to ``stream``, then closed."""
    try:
        stream.write(payload)
    except (OSError, ValueError):  # the process ended (or was killed) without reading it all
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass
