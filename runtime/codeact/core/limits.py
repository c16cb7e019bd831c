"""Resource limits of one run: typed, with defaults, validated up front."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import itertools
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ..errors import ToolTimeout, UsageError

MiB = 1024 * 1024
FOLDER_BYTES = 4096  # what a new folder takes on disk at least: a block


# Records are NamedTuples rather than dataclasses on the start-up path: a dataclass costs more to create.
class _LimitValues(NamedTuple):
    timeout: float = 30.0  # wall time of the whole run, seconds
    memory: int = 256 * MiB  # sandbox heap, bytes
    recursion: int = 1000  # maximum recursion depth
    tool_calls: int = 10_000  # tool calls per run
    output: int = 16 * 1024  # what `codeact run` prints (stdout + stderr), bytes; the rest is stored (outputs.py)
    tool_result: int = 1 * MiB  # one tool result, bytes; longer text is cut visibly
    writes: int = 128 * MiB  # what create(), edit() and sql() may write in one run, bytes (no runaway loop fills a disk)


class Limits(_LimitValues):
    """Every limit a run enforces. Override with flags, ``CODEACT_<NAME>`` variables or ``Limits(**kw)``."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Limits:
        self = super().__new__(cls, *args, **kwargs)
        for name, value in zip(self._fields, self):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < math.inf:
                raise UsageError(f"limit {name!r} must be a positive, finite number, got {value!r}")  # NaN: never
        return self

    @classmethod
    def names(cls) -> list[str]:
        return list(cls._fields)

    def merged(self, overrides: Mapping[str, Any]) -> Limits:
        """A copy with ``overrides`` applied; unknown names are refused with the valid list."""
        unknown = sorted(set(overrides) - set(self.names()))
        if unknown:
            raise UsageError(f"unknown limit(s) {', '.join(unknown)}; valid limits: {', '.join(self.names())}")
        converted: dict[str, Any] = {}
        for name, default in self._field_defaults.items():
            if name in overrides and overrides[name] is not None:
                raw = overrides[name]
                try:
                    converted[name] = float(raw) if isinstance(default, float) else int(raw)
                except (TypeError, ValueError, OverflowError):
                    raise UsageError(f"limit {name!r} must be a number, got {raw!r}") from None
        return Limits(**{**self._asdict(), **converted})

    def described(self) -> dict[str, str]:
        """Each limit as the docs and the stamped instructions write it: ``{"timeout": "30 s", "memory": "256 MiB",
        "tool_calls": "10,000", "output": "16 KiB", ...}`` (the template renders these, never its own figures)."""
        def size(n: int) -> str:
            for unit, scale in (("MiB", MiB), ("KiB", 1024)):
                if n >= scale and n % scale == 0:
                    return f"{n // scale:,} {unit}"
            return f"{n:,} bytes"

        return {"timeout": f"{self.timeout:g} s", "memory": size(self.memory), "recursion": f"{self.recursion:,}",
                "tool_calls": f"{self.tool_calls:,}", "output": size(self.output), "tool_result": size(self.tool_result),
                "writes": size(self.writes)}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Defaults overridden by ``CODEACT_TIMEOUT``, ``CODEACT_MEMORY``, ... from the environment."""
        env = os.environ if environ is None else environ
        overrides = {n: env[f"CODEACT_{n.upper()}"] for n in cls.names() if env.get(f"CODEACT_{n.upper()}")}
        return cls().merged(overrides)


class Deadline:
    """When the run ends: every tool call stops by it, so a call gets the time LEFT in the run, not a fresh timeout.

    Made with the run's ``timeout``; :meth:`start` (the runner, when the program starts) sets it ``timeout`` seconds
    from now. A tool asks :meth:`remaining` for what it may wait and raises :meth:`stopped` when it runs out.
    """

    __slots__ = ("timeout", "at", "written", "folders")

    def __init__(self, timeout: float) -> None:
        self.timeout = float(timeout)
        self.at = time.monotonic() + self.timeout
        self.written = 0  # bytes the write tools wrote in this run (the ``writes`` limit; see :meth:`charge_write`)
        self.folders = 0  # folders create() made in this run (:meth:`charge_folders`)

    def charge_write(self, size: int, limit: int) -> bool:
        """Count ``size`` bytes against the run's write limit: False (nothing counted) when they would pass it."""
        if self.written + size > limit:
            return False
        self.written += size
        return True

    def charge_folders(self, count: int, limit: int) -> bool:
        """Count ``count`` new folders against the run's write limit ``limit``, each as the block it takes on disk
        (:data:`FOLDER_BYTES`), apart from the bytes written: False (nothing counted) past it."""
        if (self.folders + count) * FOLDER_BYTES > limit:
            return False
        self.folders += count
        return True

    def start(self) -> Deadline:
        """Begin the run's time now."""
        self.at = time.monotonic() + self.timeout
        return self

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def stopped(self, tool: str, detail: str = "") -> ToolTimeout:
        """The error of ``tool`` stopped at this deadline; ``detail`` says what it was doing."""
        doing = f" while {detail}" if detail else ""
        return ToolTimeout(f"{tool}() was stopped at the run's deadline{doing} (the {self.timeout:g} s time limit "
                           "of the whole run); narrow the call, or raise the limit with --timeout")

    def check(self, tool: str, detail: str = "") -> None:
        """Raise :meth:`stopped` if the deadline has passed."""
        if time.monotonic() >= self.at:
            raise self.stopped(tool, detail)

    def interrupting(self, tool: str, detail: str = "") -> _Alarm:
        """A ``with`` block that the deadline interrupts with :meth:`stopped`, even inside a regular expression that
        backtracks for ever (Python's ``re`` checks for signals). POSIX main thread only (``SIGALRM``), and only
        when nothing else uses that signal; elsewhere the block just runs."""
        return _Alarm(self, tool, detail)

    @staticmethod
    def current() -> Deadline | None:
        """The deadline of the run in progress in this thread (set by the runner), if any."""
        return getattr(_CURRENT, "deadline", None)

    def activate(self) -> Deadline | None:
        """Make this the current deadline of this thread; returns the previous one, for :meth:`restore`."""
        previous = getattr(_CURRENT, "deadline", None)
        _CURRENT.deadline = self
        return previous

    @staticmethod
    def restore(previous: Deadline | None) -> None:
        _CURRENT.deadline = previous


class _Alarm:
    __slots__ = ("deadline", "tool", "detail", "armed")

    def __init__(self, deadline: Deadline, tool: str, detail: str) -> None:
        self.deadline, self.tool, self.detail, self.armed = deadline, tool, detail, False

    def __enter__(self) -> _Alarm:
        import signal

        if (not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)):
            return self
        self.deadline.check(self.tool, self.detail)

        def ring(_signum: int, _frame: Any) -> None:
            raise self.deadline.stopped(self.tool, self.detail)

        signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, self.deadline.remaining()))
        self.armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            self.armed = False


_CURRENT = threading.local()  # threading is loaded on the start-up path anyway; contextvars would cost more at start-up


def truncate(text: str, cap: int) -> str:
    """Cut ``text`` to ``cap`` UTF-8 bytes, saying how much was cut — never silently."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= cap:
        return text
    kept = data[:cap].decode("utf-8", "ignore")
    return f"{kept}\n... [truncated {len(data) - cap} more bytes; narrow your query]"


class _Full(Exception):
    """The text being made passed its budget."""


def within(value: Any, budget: int) -> tuple[str, bool, bool]:
    """``value`` as JSON (its ``repr`` where it is not JSON), made piece by piece and stopped once it passes
    ``budget`` characters: ``(text, whole, is_json)``, ``text`` at most ``budget`` long. A value is never
    encoded whole first (``[[[s] * 100] * 100] * 100`` is a few MB in the sandbox and 100 GB as JSON): lists and
    dicts are written in slices of a few hundred items, each by the C encoder where it is small written out (3
    million small ints to 8 MiB: a fraction of a second, where the pure-Python encoder took seconds past the run's
    end), and what is made is held as text, not as millions of tiny strings."""
    import io

    made = io.StringIO()
    size = 0

    def put(piece: str) -> None:
        nonlocal size
        made.write(piece)
        size += len(piece)
        if size > budget:
            raise _Full

    is_json = True
    try:
        try:
            _json_into(value, put, set())
        except (TypeError, ValueError):
            made.seek(0)
            made.truncate()
            size, is_json = 0, False
            _repr_into(value, put)
    except _Full:
        return made.getvalue()[:budget], False, is_json
    except RecursionError:  # nested deeper than the encoder recurses: what was made so far
        return made.getvalue()[:budget], False, is_json
    return made.getvalue(), True, is_json


_SLICE = 256  # items of a list or dict written at once
_SMALL = 1 << 16  # items and characters (written out) a slice may hold to be written by the C encoder whole


_NUMBERS = frozenset((int, float, bool, type(None)))


def _small(items: Any) -> bool:
    """Whether ``items`` (a slice) are few enough written out for the C encoder to write at once: numbers (the
    types looked at in C), strings by their length, anything else by :func:`expanded_size` (each object once)."""
    kinds = set(map(type, items))
    if kinds <= _NUMBERS:
        return True
    if kinds == {str}:
        return sum(map(len, items)) <= _SMALL
    from .sizes import expanded_size

    return expanded_size(items, _SMALL)[0] <= _SMALL


def _json_into(value: Any, put: Callable[[str], None], path: set[int]) -> None:
    """``value`` as ``json.JSONEncoder(ensure_ascii=False)`` writes it, given to ``put`` a slice at a time: a slice
    small written out (:func:`~codeact.core.sizes.expanded_size`, each object counted once) by the C
    encoder, a larger one item by item. ValueError for a value that holds itself, TypeError for one that is not
    JSON, as the encoder raises them."""
    import json

    if not isinstance(value, (list, tuple, dict)) or not value:
        put(json.dumps(value, ensure_ascii=False))
        return
    if id(value) in path:
        raise ValueError("Circular reference detected")
    path.add(id(value))
    if isinstance(value, dict):
        entries = iter(value.items())
        put("{")
        first = True
        while True:
            part = list(itertools.islice(entries, _SLICE))
            if not part:
                break
            if _small([key for key, _ in part]) and _small([item for _, item in part]):
                put(("" if first else ", ") + json.dumps(dict(part), ensure_ascii=False)[1:-1])
            else:
                for key, item in part:
                    put(("" if first else ", ") + json.dumps({key: 0}, ensure_ascii=False)[1:-2])
                    _json_into(item, put, path)
                    first = False
            first = False
        put("}")
    else:
        put("[")
        for start in range(0, len(value), _SLICE):
            row = value[start:start + _SLICE]
            if _small(row):
                put(("" if start == 0 else ", ") + json.dumps(list(row), ensure_ascii=False)[1:-1])
            else:
                for index, item in enumerate(row):
                    if start or index:
                        put(", ")
                    _json_into(item, put, path)
        put("]")
    path.discard(id(value))


def _repr_into(value: Any, put: Callable[[str], None]) -> None:
    """``repr(value)`` given to ``put`` piece by piece (containers, and a value of the program's own class, opened
    up; anything else as its ``repr``)."""
    if isinstance(value, (list, tuple)):
        put("[" if isinstance(value, list) else "(")
        for index, item in enumerate(value):
            put(", " if index else "")
            _repr_into(item, put)
        put("]" if isinstance(value, list) else ",)" if len(value) == 1 else ")")
    elif isinstance(value, dict):
        put("{")
        for index, (key, item) in enumerate(value.items()):
            put(", " if index else "")
            _repr_into(key, put)
            put(": ")
            _repr_into(item, put)
        put("}")
    elif isinstance(value, (set, frozenset)) and value:
        put("{" if isinstance(value, set) else "frozenset({")
        for index, item in enumerate(value):
            put(", " if index else "")
            _repr_into(item, put)
        put("}" if isinstance(value, set) else "})")
    elif hasattr(value, "fields") and hasattr(value, "name") and isinstance(value.fields, dict):
        put(f"{value.name}(")  # codeact.backends.monty.DataclassValue
        for index, (key, item) in enumerate(value.fields.items()):
            put(f"{', ' if index else ''}{key}=")
            _repr_into(item, put)
        put(")")
    elif isinstance(value, int) and not isinstance(value, bool):
        put(int_text(value))
    else:
        try:
            put(repr(value))
        except ValueError as exc:  # a repr with an int past CPython's digits limit in it
            put(f"<{type(value).__name__}: not shown: {exc}>")


def int_text(value: int) -> str:
    """``repr(value)``, or its exact hexadecimal literal (``0x...``, a valid Python int) where it has more decimal
    digits than CPython writes (4,300 by default: the decimal text costs the digits squared; the hex is linear)."""
    return repr(value) if decimal_fits(value) else hex(value)


_DECIMAL_LIMITS: dict[int, int] = {}  # CPython's digits limit -> 10 ** limit, the least int it will not write


def decimal_fits(value: int) -> bool:
    """Whether CPython writes ``value`` in decimal (``str``, ``repr``, ``json``): at most
    ``sys.get_int_max_str_digits()`` digits. Told by its bit length, or one comparison (linear), never by writing it
    (quadratic: some 240 us for 4,299 digits) -- the one rule for results (:func:`int_text`) and sessions."""
    import sys

    if value.bit_length() <= DECIMAL_BITS:
        return True
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit <= 0:
        return True
    least = _DECIMAL_LIMITS.get(limit)
    if least is None:
        least = _DECIMAL_LIMITS.setdefault(limit, 10 ** limit)
    return abs(value) < least


DECIMAL_BITS = 640 * 3  # fewer bits are fewer than 640 digits, CPython's least digits limit: no check needed
