"""ripgrep as both search engines run it: where it is, the flags that make it read the ignore files the Python walk
reads, its command line, and its raw output read in pieces (paths as bytes, NUL-ended)."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..textfile import MAX_LINE_CHARS
from .walk import SKIP_IGNORE_FILE, Glob, read_ignore

LONG_COLUMNS = 4 * MAX_LINE_CHARS  # bytes: ripgrep omits a longer matched line; it is read back and cut here
_RG_UNSET = object()
_rg_cache: object = _RG_UNSET


def rg_binary() -> str | None:
    """The ripgrep executable: next to this Python (the ``ripgrep`` wheel), else on ``PATH``; ``None`` if absent."""
    global _rg_cache
    if _rg_cache is _RG_UNSET:
        import shutil
        import sys
        exe = "rg.exe" if os.name == "nt" else "rg"
        found = None
        for folder in {Path(sys.executable).parent, Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin")}:
            candidate = folder / exe
            if candidate.is_file() and os.access(candidate, os.X_OK):
                found = str(candidate)
                break
        _rg_cache = found or shutil.which(exe)
    return _rg_cache  # type: ignore[return-value]


def parent_flags(root: Path, start: Path) -> list[str] | None:
    """The flags that make ripgrep read the ignore files the Python walk reads; ``None`` when it cannot.

    In a git work tree ripgrep keeps git's rules (a nested repository does not inherit the outer .gitignore), so
    ``--no-require-git`` is passed only outside one. ripgrep also reads ``.ignore``/``.rgignore`` files (and, outside
    a work tree, ``.gitignore`` and a surrounding repository's ``info/exclude``) of every folder above the
    workspace, up to ``/``: ``--no-ignore-parent`` drops them, but also the workspace's own folders above ``start``,
    so such a search below the root goes to Python, as does one below the root whose ignore files above ``start``
    hold anchored rules (:func:`_anchored_above`). About 20 ``stat`` calls, each time (a program may run
    ``git init``)."""
    in_git = (root / ".git").exists()
    names = (".ignore", ".rgignore") if in_git else (".gitignore", ".ignore", ".rgignore", ".git/info/exclude")
    flags = [] if in_git else ["--no-require-git"]
    if start != root and _anchored_above(root, start):
        return None
    if not any((folder / name).is_file() for folder in root.parents for name in names):
        return flags
    return [*flags, "--no-ignore-parent"] if start == root else None


def _anchored_above(root: Path, start: Path) -> bool:
    """Whether an ignore file between the root and ``start`` has a rule with a ``/`` inside (``/build``,
    ``!a/b/x.log``): ripgrep, searching from ``start``, matches such rules of the folders above it wrongly."""
    folder, folders = start.parent, []
    while folder != root and folder.is_relative_to(root):
        folders.append(folder)
        folder = folder.parent
    files = [f / n for f in (root, *folders) for n in (".gitignore", ".ignore", ".rgignore")]
    for path in [*files, root / ".git" / "info" / "exclude"]:
        read = read_ignore(path, root)
        if read is not None and read.cut_from:
            return True  # rules past the cut are not seen here: searched in Python, which says so in a note
        for line in (read.text if read is not None else "").splitlines():
            rule = line.strip().lstrip("!").rstrip("/")
            if rule and not line.startswith("#") and "/" in rule:
                return True
    return False


def confined_reads(rg: str) -> tuple[str, ...]:
    """What a confined ripgrep reads outside the workspace (:mod:`codeact.tools.confine`): itself, our ignore file."""
    return rg, str(SKIP_IGNORE_FILE)


def command(rg: str, glob: Glob | None, parents: Sequence[str] = (),
            overrides: Sequence[str] | None = None) -> list[str]:
    """ripgrep's command line for a search from the workspace's rules; ``overrides``: ``--glob`` flags given
    instead of a file type (:class:`codeact.tools.search.rg_listing.Overrides`)."""
    cmd = [rg, "--no-config", "--hidden", "--no-ignore-global", "--no-messages", *parents]
    cmd += ["--ignore-file", str(SKIP_IGNORE_FILE)]  # SKIP_DIRS; re-included ones are dropped (scope.skipped)
    if overrides is not None:
        cmd += overrides
    elif glob is not None and glob.rg_type is not None:
        # a file type, not --glob: ripgrep lets --glob override .gitignore, while types respect it
        cmd += ["--type-clear", "codeact", "--type-add", f"codeact:{glob.rg_type}", "--type", "codeact"]
    if glob is not None and glob.kind == "top":
        cmd += ["--max-depth", "1"]
    if glob is not None and glob.kind == "path":
        # an override narrows the output, but it also beats .gitignore: Reach drops what it let through
        cmd += ["--glob", glob.rest]
    return cmd


FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's, for a whole chunk at once


def rel_path(raw: bytes) -> str:
    """A path as ripgrep printed it, decoded, without a leading ``./``."""
    rel = os.fsdecode(raw)
    return rel[2:] if rel.startswith("./") else rel


_GATHER = 32 << 10  # bytes of ripgrep's output read before they are parsed


def gathered(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` joined into pieces of at least ``_GATHER`` bytes (the last may be less): ripgrep writes file by
    file, so most reads hold a few records, and each parse has a cost of its own."""
    held: list[bytes] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size >= _GATHER:
            yield b"".join(held)
            held, size = [], 0
    if held:
        yield b"".join(held)


def names_with(listed: bytes, mark: bytes) -> list[str]:
    """The names in ``listed`` (NUL-ended) that hold ``mark``: found at C speed, where few are expected."""
    names, at = [], listed.find(mark)
    while at >= 0:
        end = listed.find(b"\0", at)
        names.append(listed[listed.rfind(b"\0", 0, at) + 1:end].decode(*FS))
        at = listed.find(mark, end + 1)
    return names
