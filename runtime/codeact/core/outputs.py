"""What a run shows the model, and the store that keeps the rest.

The Copilot CLI replaces a tool result over about 20 KiB by a file the model is shown 500 characters of (and in
exclusive mode cannot read back). So ``codeact run`` prints at most ``Limits.output`` bytes (16 KiB by default),
stdout and stderr together. When it has to cut, it cuts the MIDDLE of what the program printed (the answer is
usually at the end): the head and the tail are shown, the last value's line and stderr (notes, the error) always
are, the whole output goes to the store, and where the cut is a line says how much was cut and how to read it::

    [cut: N more bytes, M lines; read them with previous_output(run="ID", first_line=K)]

The store (:class:`OutputStore`) is a per-user 0700 folder outside the workspace,
``$XDG_RUNTIME_DIR/codeact-<uid>/outputs`` (else ``outputs`` in codeact's cache folder), one sub-folder per
workspace, one 0600 file per cut run, created with ``O_NOFOLLOW|O_EXCL``; it keeps the last 20 runs or 8 MiB per
workspace. Lines are numbered from 1 and end at ``\\n``: stdout first, then stderr, as the model would have received
them. Only runs whose output was cut are stored, so a run that fits costs no file at all.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ErrorInfo, ToolError
from ..privatedir import ensure_private_dir
from .limits import within

MiB = 1024 * 1024
KEEP_RUNS = 20  # runs kept per workspace
KEEP_BYTES = 8 * MiB  # bytes kept per workspace (and at most per run)
KEEP_PRINTED = KEEP_BYTES - 64 * 1024  # what a run keeps of the printed output: room left for its value and error
RUN_ID = r"[A-Za-z0-9]{8,64}"  # compiled only where a run is stored or read
_ID_LENGTH = 12
CUT_LINE = "[cut: {bytes} more bytes, {lines} lines; read them with previous_output(run=\"{run}\", first_line={first})]"
NOT_STORED_LINE = "[cut: {bytes} more bytes, {lines} lines; the output store is unavailable ({why}); print less]"


# ------------------------------------------------------------------------------------------------ what is printed
VALUE_BUDGET = KEEP_BYTES  # characters of a run's last value made as text: the store keeps no more of a run


def jsonable(value: Any) -> Any:
    """``value`` if it serialises as JSON, else its ``repr``; ``None`` when either passes :data:`VALUE_BUDGET`
    (the plain output's value line shows its start and says it was cut)."""
    text, whole, is_json = within(value, VALUE_BUDGET)
    return None if not whole else value if is_json else text


def plain_streams(stdout: str, result: Any, error: ErrorInfo | None, notes: Any = (),
                  stderr: str = "") -> tuple[str, str]:
    """What ``codeact run`` prints without ``--json``, whole: (stdout, stderr).

    stdout: what the program printed, then its last value as one line of JSON (a value that is not JSON as its
    ``repr``); stderr: what the program printed to ``sys.stderr``, one ``note: ...`` line per note, then the error
    (type, line, message) and its hint."""
    return stdout + value_line(result), stderr + said_after(error, notes)


def value_line(result: Any) -> str:
    """The line that shows a run's last value (empty when there is none)."""
    if result is None:
        return ""
    text, whole, _ = within(result, VALUE_BUDGET)  # JSON, or the repr of what is not JSON
    if not whole:
        text += f" ... [the value is longer than {VALUE_BUDGET:,} characters; print the part you need]"
    return text + "\n"


def said_after(error: ErrorInfo | None, notes: Any = ()) -> str:
    """The notes and the error of a run, as stderr ends with them."""
    err = "".join(f"note: {note}\n" for note in notes or ())
    if error is not None:
        where = f" (line {error.line})" if error.line else ""
        err += f"{error.type}{where}: {error.message}\n"
        if error.hint:
            err += f"hint: {error.hint}\n"
    return err


class WindowCut:
    """What a window left out: ``bytes`` and whole ``lines`` not shown, from ``first_line``; ``run`` is the stored
    run's ID (``None`` if the store could not take it, ``why`` then says why). A plain class: this module is on the
    start-up path, and a NamedTuple costs more to define."""

    __slots__ = ("bytes", "lines", "first_line", "run", "why")

    def __init__(self, bytes: int, lines: int, first_line: int, run: str | None = None, why: str = "") -> None:
        self.bytes, self.lines, self.first_line, self.run, self.why = bytes, lines, first_line, run, why

    def __repr__(self) -> str:
        return (f"WindowCut(bytes={self.bytes}, lines={self.lines}, first_line={self.first_line}, run={self.run!r}, "
                f"why={self.why!r})")

    def line(self) -> str:
        """The line that stands where the output was cut (no newline)."""
        if self.run is None:
            return NOT_STORED_LINE.format(bytes=self.bytes, lines=self.lines, why=self.why or "unknown")
        return CUT_LINE.format(bytes=self.bytes, lines=self.lines, run=self.run, first=self.first_line)

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "bytes": self.bytes, "lines": self.lines}


class Window:
    """What fits the cap. Cut in the middle (``tail`` set, or ``middle``): ``out`` is the head of the printed
    stdout, the cut line goes after it, then ``tail`` (the end of the printed stdout and the value's line) and
    ``err`` whole. Cut at the end (when the value or stderr alone would not leave room): ``out`` and ``err`` are
    heads and the cut line ends the output. ``out_whole``: how many stdout lines of the head are shown whole;
    ``out_part``: a shown prefix of the next one. ``transcript``: the whole output as stored (stdout, then stderr;
    empty when nothing was cut)."""

    __slots__ = ("out", "err", "cut", "out_whole", "out_part", "transcript", "tail", "middle")

    def __init__(self, out: str, err: str, cut: WindowCut | None = None, out_whole: int = 0, out_part: str = "",
                 transcript: str = "", tail: str = "", middle: bool = False) -> None:
        self.out, self.err, self.cut = out, err, cut
        self.out_whole, self.out_part, self.transcript = out_whole, out_part, transcript
        self.tail, self.middle = tail, middle

    def streams(self) -> tuple[str, str]:
        """(stdout, stderr) as printed, with the cut line where the cut is."""
        if self.cut is None:
            return self.out, self.err
        if self.middle:
            return self.out + self.cut.line() + "\n" + self.tail, self.err
        if self.err:
            return self.out, self.err + self.cut.line() + "\n"
        return self.out + self.cut.line() + "\n", ""


def split_lines(text: str) -> list[str]:
    """Lines ending at ``\\n`` only, each with its newline (the last one may lack it)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _lines_in(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _head(data: bytes, room: int) -> tuple[int, int, bytes]:
    """Whole lines of ``data`` that fit ``room`` bytes, then a prefix of the next one when room is left over (always
    when no whole line fits): (whole lines, their bytes, the prefix). Works on bytes: an output may be 8 MiB."""
    if len(data) <= room:
        return _count_lines(data), len(data), b""
    used = data.rfind(b"\n", 0, room) + 1
    whole = data.count(b"\n", 0, used)
    left = room - used - 1  # one byte for the newline that ends a shown prefix
    part = b""
    if left > 0 and (whole == 0 or left > room // 4):  # the next line is longer than ``left``: no newline in it
        part = data[used:used + left].decode("utf-8", "ignore").encode("utf-8", "surrogatepass")
    return whole, used, part


def _tail(data: bytes, room: int, start: int) -> int:
    """Where the whole lines at the end of ``data`` that fit ``room`` bytes begin, at ``start`` or later
    (``len(data)``: none fit)."""
    at = max(start, len(data) - max(room, 0))
    if at >= len(data):
        return len(data)
    if at == 0 or data[at - 1:at] == b"\n":
        return at
    found = data.find(b"\n", at)
    return len(data) if found < 0 else found + 1


def window(out: str, err: str, cap: int, value: str = "") -> Window:
    """The part of the output that fits ``cap`` bytes with the cut line; ``cut`` is None when all of it fits.

    ``out`` is what the program printed, ``value`` the line of its last value, ``err`` stderr (what the program
    printed there, the notes, the error and its hint). The cut takes the MIDDLE of the printed output: the head and
    the tail of it are shown, the value's line and stderr always are (unless they alone take more than half the
    room: then the head of everything is shown, and the cut line ends it). Shown text ends at a line end where it
    can; a line too long for the room is shown cut and counted as not shown."""
    out_b, value_b, err_b = (t.encode("utf-8", "surrogatepass") for t in (out, value, err))
    if len(out_b) + len(value_b) + len(err_b) <= cap:
        return Window(out + value, err)
    if out_b and not out_b.endswith(b"\n") and (value_b or err_b):
        out_b += b"\n"  # the value's line (or stderr) starts a new line in the transcript
    printed_count = _count_lines(out_b)
    stdout_b = out_b + value_b
    out_count, err_count = _count_lines(stdout_b), _count_lines(err_b)
    total, count = len(stdout_b) + len(err_b), out_count + err_count
    transcript = (stdout_b + err_b).decode("utf-8", "surrogatepass")
    widest = WindowCut(total, count, count, "x" * _ID_LENGTH).line()
    budget = max(cap - _size(widest) - 3, 0)  # the cut line, its newline, and a newline after each cut prefix
    kept = len(value_b) + len(err_b)
    if kept <= budget // 2:
        room = budget - kept
        head_whole, head_used, head_part = _head(out_b, room // 2)
        tail_at = _tail(out_b, room - head_used - len(head_part), head_used + len(head_part))
        tail_lines = _count_lines(out_b[tail_at:])
        shown = head_used + len(head_part) + (len(out_b) - tail_at)
        cut = WindowCut(len(out_b) - shown, printed_count - head_whole - tail_lines, head_whole + 1)
        head = (out_b[:head_used] + (head_part + b"\n" if head_part else b"")).decode("utf-8", "surrogatepass")
        tail = (out_b[tail_at:] + value_b).decode("utf-8", "surrogatepass")
        return Window(head, err, cut, head_whole, head_part.decode("utf-8", "surrogatepass"), transcript, tail,
                      middle=True)
    err_room = min(len(err_b), max(budget - len(stdout_b), budget // 2))
    err_whole, err_used, err_part = _head(err_b, err_room)
    out_whole, out_used, out_part = _head(stdout_b, budget - err_used - len(err_part))
    first = out_whole + 1 if out_whole < out_count else out_count + err_whole + 1
    shown_bytes = out_used + len(out_part) + err_used + len(err_part)
    cut = WindowCut(total - shown_bytes, count - out_whole - err_whole, first)

    def text(data: bytes, used: int, part: bytes) -> str:
        return (data[:used] + (part + b"\n" if part else b"")).decode("utf-8", "surrogatepass")

    return Window(text(stdout_b, out_used, out_part), text(err_b, err_used, err_part), cut, out_whole,
                  out_part.decode("utf-8", "surrogatepass"), transcript)


# -------------------------------------------------------------------------------------------------------- store
class OutputStore:
    """The cut runs of one workspace: ``root`` is its private folder (created on the first save)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_workspace(cls, workspace: Path, environ: Mapping[str, str] | None = None) -> OutputStore:
        """The store of ``workspace`` (a resolved path) under this user's store folder."""
        import hashlib

        key = hashlib.sha256(os.fsencode(str(workspace))).hexdigest()[:16]
        return cls(store_folder(os.environ if environ is None else environ) / key)

    def save(self, text: str) -> str:
        """Store ``text`` (cut to 8 MiB at a line end) as a new run, drop the oldest beyond the retention limits,
        and return the run's ID. Raises ``OSError`` when the store cannot be used."""
        import secrets

        data = text.encode("utf-8", "surrogatepass")
        if len(data) > KEEP_BYTES:
            keep = data.rfind(b"\n", 0, KEEP_BYTES - 200) + 1 or KEEP_BYTES - 200
            data = data[:keep] + f"[{len(data) - keep} more bytes were not stored: the store keeps 8 MiB]\n".encode()
        _private_folder(self.root)
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        for _attempt in range(5):
            run = "".join(secrets.choice(alphabet) for _ in range(_ID_LENGTH))
            try:
                fd = os.open(self.root / f"{run}.txt", flags, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if os.utime in os.supports_fd:  # a fine clock: file systems stamp coarsely, and age orders pruning
                    now = time.time_ns()
                    os.utime(handle.fileno(), ns=(now, now))
            self.prune(keep=run)
            return run
        raise OSError("could not pick a new run ID")  # pragma: no cover - 36**12 IDs

    def prune(self, keep: str | None = None) -> None:
        """Remove the oldest runs beyond the last 20 or 8 MiB (``keep`` stays, whatever its size)."""
        runs: list[tuple[int, str, int]] = []
        try:
            with os.scandir(self.root) as it:
                for entry in it:
                    name = entry.name
                    if name.endswith(".txt") and re.fullmatch(RUN_ID, name[:-4]):
                        info = entry.stat(follow_symlinks=False)
                        runs.append((info.st_mtime_ns, name[:-4], info.st_size))
        except OSError:
            return
        runs.sort(key=lambda r: (r[1] != keep, -r[0], r[1]))
        kept, size = 0, 0
        for _mtime, run, bytes_ in runs:
            if kept < KEEP_RUNS and (size + bytes_ <= KEEP_BYTES or run == keep):
                kept, size = kept + 1, size + bytes_
                continue
            try:
                os.unlink(self.root / f"{run}.txt")
            except OSError:
                pass

    def read(self, run: str) -> str:
        """The whole stored output of ``run``; ``ToolError`` when the ID is malformed or not stored (any more)."""
        if not isinstance(run, str) or not re.fullmatch(RUN_ID, run):
            raise ToolError(f"run must be the ID a cut line names (8 to 64 letters and digits), got {run!r}")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.root / f"{run}.txt", flags)
        except FileNotFoundError:
            raise ToolError(f"no stored output for run {run!r} in this workspace: the store keeps the last "
                            f"{KEEP_RUNS} cut runs (8 MiB); run the program again and print less") from None
        except OSError as exc:
            raise ToolError(f"cannot read the stored output of run {run!r}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                raise ToolError(f"the stored output of run {run!r} is not a file of yours; not read")
            return handle.read().decode("utf-8", "replace")


def store_folder(environ: Mapping[str, str]) -> Path:
    """This user's store folder: ``$XDG_RUNTIME_DIR/codeact-<uid>/outputs``, else ``<cache>/outputs``."""
    runtime = environ.get("XDG_RUNTIME_DIR") or ""
    if os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / f"codeact-{_uid()}" / "outputs"
    from ..paths import codeact_cache_dir

    return codeact_cache_dir(environ) / "outputs"


def _uid() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass  # pragma: no cover - Windows

    return re.sub(r"[^A-Za-z0-9]", "_", getpass.getuser())  # pragma: no cover


def _private_folder(folder: Path) -> None:
    """Create ``folder`` (and the store folders above it) 0700; refuse a link or another user's folder."""
    base = folder.parent.parent  # codeact-<uid> (or the cache folder), then outputs, then the workspace's
    if base.name.startswith("codeact-"):
        ensure_private_dir(base, what="output store folder", parents=True)
    else:
        base.mkdir(parents=True, exist_ok=True)  # the shared cache folder: its own mode
    for path in (folder.parent, folder):
        ensure_private_dir(path, what="output store folder")


# ------------------------------------------------------------------------------------------------ the run's output
def present(result: Any, *, cap: int, workspace: Path | Callable[[], Path] | None,
            environ: Mapping[str, str] | None = None, as_json: bool = False) -> tuple[str, str]:
    """What ``codeact run`` writes for ``result`` (a RunResult): (stdout, stderr), at most ``cap`` bytes together.

    Without ``--json``: the plain streams, cut to the cap, the cut line last (on stderr when stderr is shown,
    so it is the last line either way). With ``--json``: one JSON object of at most ``cap`` bytes (unless the fields
    around the output alone are larger) whose ``stdout`` is cut the same way (ending in the cut line), whose
    ``result`` is ``null`` when its line was cut away, with ``"cut": {"run", "bytes", "lines"}`` (``null`` when
    nothing was cut). The store always gets the plain form, so line numbers are the same with or without
    ``--json``. ``workspace`` (or a function giving it) names the store's folder; a store that cannot be written
    turns the cut line into one that says so."""
    notes = getattr(result, "notes", ()) or ()
    printed, value = result.stdout, value_line(result.result)
    err = getattr(result, "stderr", "") + said_after(result.error, notes)
    if not as_json:
        shown = window(printed, err, cap, value)
        cut = _store(shown, workspace, environ)
        if cut is not None and cut.run is None:  # the line saying why is longer than one naming a run
            over = _size(cut.line()) - _size(WindowCut(cut.bytes, cut.lines, cut.first_line, "x" * _ID_LENGTH).line())
            if over > 0:
                why, shown = cut.why, window(printed, err, max(0, cap - over), value)
                if shown.cut is not None:
                    shown.cut.why = why
        return shown.streams()
    envelope = result.to_json()
    room, whole = cap, _size(printed) + _size(value) + _size(err)
    for _attempt in range(32):  # JSON escapes text and adds fields: shrink the plain room until the object fits
        shown = window(printed, err, room, value)
        fields = _json_fields(envelope, result, shown, shown.cut)
        size = _size(_dumps(fields))
        if size <= cap or room == 0:
            break
        text = fields["stdout"]  # each byte shown costs this many in the JSON
        ratio = max(1.0, _size(json.dumps(text, ensure_ascii=False)) / max(1, _size(text)))
        room = max(0, min(room - 1, whole) - int((size - cap) / ratio) - 1)
    return _dumps(_json_fields(envelope, result, shown, _store(shown, workspace, environ))), ""


def _dumps(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False) + "\n"


def _store(shown: Window, workspace: Path | Callable[[], Path] | None,
           environ: Mapping[str, str] | None) -> WindowCut | None:
    """``shown.cut`` with the run it was stored as (or why it could not be)."""
    cut = shown.cut
    if cut is not None and cut.run is None and not cut.why:
        try:
            if workspace is None:
                raise OSError("no workspace")
            root = workspace() if callable(workspace) else workspace  # resolved only when something is cut
            cut.run = OutputStore.for_workspace(root, environ).save(shown.transcript)
        except OSError as exc:
            cut.why = str(exc)
    return cut


def _json_fields(envelope: dict[str, Any], result: Any, shown: Window, cut: WindowCut | None) -> dict[str, Any]:
    """The ``--json`` object for a window: the cut stdout (with the cut line where the cut is), the value unless
    its line was cut away."""
    if cut is None:
        return {**envelope, "cut": None}
    if cut.run is None and not cut.why:
        cut = WindowCut(cut.bytes, cut.lines, cut.first_line, "x" * _ID_LENGTH)  # as long as the ID it will get
    if shown.middle:  # the tail's last line is the value's, which ``result`` carries
        tail = shown.tail[:len(shown.tail) - len(value_line(result.result))]
        return {**envelope, "stdout": shown.out + cut.line() + "\n" + tail, "cut": cut.to_json()}
    printed = _lines_in(result.stdout)
    whole = min(shown.out_whole, printed)
    part = shown.out_part if shown.out_whole < printed else ""
    head = "".join(split_lines(shown.out)[:whole])  # shown.out is at most the cap: cheap to split
    fields = {**envelope, "stdout": head + (part + "\n" if part else "") + cut.line() + "\n", "cut": cut.to_json()}
    if result.result is not None and shown.out_whole < printed + 1:
        fields["result"] = None
    return fields


def previous_lines(store: OutputStore, run: str, first_line: int = 1, last_line: int | None = None) -> str:
    """Lines ``first_line`` to ``last_line`` (1-based, inclusive; ``None``: to the end) of a stored run."""
    for name, value in (("first_line", first_line), ("last_line", last_line)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ToolError(f"{name} must be a line number (an int), got {value!r}")
    if first_line < 1:
        raise ToolError(f"first_line must be 1 or more (lines are numbered from 1), got {first_line}")
    if last_line is not None and last_line < first_line:
        raise ToolError(f"last_line ({last_line}) is before first_line ({first_line})")
    lines = split_lines(store.read(run))
    if first_line > len(lines):
        raise ToolError(f"run {run!r} has {len(lines)} lines; first_line {first_line} is past the end")
    return "".join(lines[first_line - 1:last_line])


__all__ = ["KEEP_BYTES", "KEEP_PRINTED", "OutputStore", "Window", "WindowCut", "plain_streams", "present",
           "previous_lines", "said_after", "value_line", "window"]
