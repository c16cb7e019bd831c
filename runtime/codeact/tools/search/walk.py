"""Walking the workspace as ripgrep does: its glob syntax, its ignore files and their precedence, no links.

The pure-Python side of the search tools (codeact.tools.search), also used to check what ripgrep returns when it
had to be given an override glob. Kept apart so each module stays readable.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, TypeAlias, TypeVar

from ...core.beneath import read_regular_within
from ...core.patterns import MAX_PATTERN, check_pattern, compile_narrow, compile_uncached
from ...errors import ToolError
from .. import confine

# .codeact holds the vendored CodeAct runtime: noise in every search of the user's code.
SKIP_DIRS = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".codeact", ".codeact-cache")
# The same folders as an ignore file, for ripgrep: cheaper than an override glob on a large tree, but
# an ignore file can re-include them (`!*/`), so what ripgrep lists is checked again (codeact.tools.search).
SKIP_IGNORE_FILE = Path(__file__).with_name("skip.ignore")
IGNORE_KINDS = (".rgignore", ".ignore", ".gitignore")  # highest precedence first, as ripgrep reads them

Rules = list[tuple[re.Pattern[str], bool, bool]]  # (regex, negated, dir_only), in file order


# --------------------------------------------------------------------------------------------------------- globs
def translate_glob(pattern: str) -> str:
    """A regular expression (for ``fullmatch``) equivalent to a ripgrep/.gitignore glob; ValueError if malformed.

    It cannot backtrack more than linearly: ``*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b`` against a name of 60 ``a`` tried
    every way to place the a's (hours, in C, the interpreter held; a committed .gitignore rule is enough). Within a
    segment, each ``*`` but the last takes the fewest characters before the fixed part after it, atomically (as
    CPython's fnmatch does: with fixed-length parts the leftmost place is always a right one), and so does each
    ``**/`` at the level of whole segments. A glob holding ``{a,b}`` is expanded into the brace-free globs it
    stands for (at most :data:`MAX_ALTERNATIVES`), each translated so, and matched one after the other."""
    nodes = _nodes(pattern)
    if any(isinstance(node, list) for node in nodes):
        return _translate_braced(nodes)
    return _join_segments(_segments(pattern), _segment, lambda s: "/" not in s and s != "")


_Segment = TypeVar("_Segment")


def _join_segments(segments: Sequence[_Segment], translate: Callable[[_Segment], str],
                   fixed_one: Callable[[_Segment], bool]) -> str:
    """The regular expression of a glob's ``segments`` (``"**"`` where a whole segment is ``**``), each other
    segment translated by ``translate``; ``fixed_one``: whether a segment matches within one segment of a path."""
    out: list[str] = []
    i, n = 0, len(segments)
    while i < n:
        seg = segments[i]
        if seg != "**":
            out.append(translate(seg) + ("/" if i + 1 < n else ""))
            i += 1
            continue
        if i + 1 == n:  # a trailing `**`: anything (below)
            out.append(".*")
            break
        j = i + 1  # the segments up to the next `**` (or the end): each matches exactly one segment of a path
        while j < n and segments[j] != "**":
            j += 1
        if j == i + 1:  # `**/**`: one is enough
            i = j
            continue
        chunk = "/".join(translate(s) for s in segments[i + 1:j])
        fixed = all(fixed_one(s) for s in segments[i + 1:j])
        if j < n and fixed:  # the fewest whole segments before the chunk, atomically: it and a `/` follow
            out.append(_atomic(f"(?:[^/]*/)*?{chunk}/"))
        else:
            out.append(f"(?:.*/)?{chunk}" + ("/" if j < n else ""))
        i = j
    return "".join(out)


# ------------------------------------------------------------------------------------------ globs with braces
# A glob with braces is read into atoms, as :func:`_translate_plain` writes them: (kind, regex) with kind "c" (one
# character, not a `/`), "/" (a `/`), "*" (`[^/]*`), "a" (`.*`: a trailing `**`) or "d" (`(?:.*/)?`: a `**/`); a
# `{a,b}` is a list of its alternatives' atoms (each read as a glob of its own, as translate_glob reads it).
MAX_ALTERNATIVES = 256  # brace-free globs one glob may stand for: past it, it is refused (an ignore rule, skipped)
# ... of which with a `**` inside a segment: each such is matched in time quadratic in a path's length (about
# 3 ms for a path of 4 KB), not linear
MAX_LOOSE = 32
_A_STAR, _A_ANY, _A_DIRS, _A_SLASH = ("*", "[^/]*"), ("a", ".*"), ("d", "(?:.*/)?"), ("/", "/")
_TOO_MANY = (f"its '{{...}}' groups stand for more than {MAX_ALTERNATIVES} globs; use fewer alternatives "
             "(or several calls)")
_Atom = tuple[str, str]
_Node: TypeAlias = "_Atom | list[list[_Node]]"


def _nodes(pattern: str) -> list[_Node]:
    """``pattern`` read as :func:`_translate_plain` reads it, its ``{a,b}`` groups as lists of alternatives."""
    out: list[_Node] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            piece: list[str] = []
            i = _translate_stars(pattern, i, piece)
            out.append({"[^/]*": _A_STAR, ".*": _A_ANY}.get(piece[0], _A_DIRS))
        elif c == "?":
            out.append(("c", "[^/]"))
            i += 1
        elif c == "[":
            piece = []
            i = _translate_class(pattern, i, piece)
            out.append(("c", piece[0]))
        elif c == "{":
            parts, i = _alternatives(pattern, i)
            try:
                out.append([_nodes(part) for part in parts])
            except RecursionError:
                raise ValueError("its '{' groups nest too deep") from None
        else:
            if c == "\\" and i + 1 < n:
                i += 1
                c = pattern[i]
            out.append(_A_SLASH if c == "/" else ("c", re.escape(c)))
            i += 1
    return out


def _expand(nodes: list[_Node], size: list[int]) -> list[list[_Atom]]:
    """The brace-free atom sequences ``nodes`` stand for: ValueError past :data:`MAX_ALTERNATIVES` of them, or
    past :data:`MAX_PATTERN` atoms in all (``size``: the atoms made so far)."""
    seqs: list[list[_Atom]] = [[]]
    for node in nodes:
        if isinstance(node, list):
            choices = [seq for part in node for seq in _expand(part, size)]
            if len(seqs) * len(choices) > MAX_ALTERNATIVES:
                raise ValueError(_TOO_MANY)
            size[0] += sum(len(a) for a in seqs) * (len(choices) - 1) + sum(len(b) for b in choices) * len(seqs)
            seqs = [a + b for a in seqs for b in choices]
        else:
            size[0] += len(seqs)
            for seq in seqs:
                seq.append(node)
        if size[0] > MAX_PATTERN:
            raise ValueError(f"its '{{...}}' groups stand for globs of more than {MAX_PATTERN:,} characters in all")
    return seqs


def _normal(seq: Iterable[_Atom]) -> list[_Atom]:
    """``seq`` with its runs of stars merged (``[^/]*[^/]*`` is ``[^/]*``; ``.*`` takes in a star or ``**/`` beside
    it): the same names match."""
    out: list[_Atom] = []
    for atom in seq:
        last = out[-1][0] if out else ""
        if atom is _A_STAR and last in ("*", "a") or atom is _A_DIRS and last in ("d", "a"):
            continue
        if atom is _A_ANY:
            while out and out[-1][0] in ("*", "d"):
                out.pop()
        out.append(atom)
    return out


def _translate_braced(nodes: list[_Node]) -> str:
    """The regular expression of a glob with braces: one alternative per brace-free glob it stands for, each made
    as for a glob without braces (none backtracks more than polynomially, and they are tried one after the other,
    never in combination)."""
    size, loose = [0], 0
    alternatives: list[str] = []
    for seq in _expand(nodes, size):
        seq = _normal(seq)
        segments = _atom_segments(seq)
        if segments is not None:
            alternatives.append(_join_segments(segments, _chunked, bool))
            continue
        variants: list[list[_Atom]] = [[]]  # each `**/` not at a segment's start: none, or `.*/`
        for atom in seq:
            if atom is _A_DIRS:
                variants = [v + extra for v in variants for extra in ([], [_A_ANY, _A_SLASH])]
                if len(alternatives) + len(variants) > MAX_ALTERNATIVES:
                    raise ValueError(_TOO_MANY)
            else:
                for v in variants:
                    v.append(atom)
        loose += len(variants)
        if loose > MAX_LOOSE:
            raise ValueError(f"it stands for more than {MAX_LOOSE} globs with a '**' inside a segment (as "
                             "'x{**/a,b}' or '{a/**,b}x' make); write the '**' as a whole segment")
        alternatives.extend(_any_blocks(_normal(v)) for v in variants)
    if len(alternatives) > MAX_ALTERNATIVES:
        raise ValueError(_TOO_MANY)
    unique = list(dict.fromkeys(alternatives))
    return unique[0] if len(unique) == 1 else "(?:" + "|".join(unique) + ")"


def _atom_segments(seq: list[_Atom]) -> list[list[_Atom] | str] | None:
    """``seq`` as a glob's segments (``"**"`` for a ``**``), or ``None`` where a ``**`` in it does not stand at the
    start of a segment (``x{**/a,b}``) or a trailing one does not end it (``{a/**,b}c``)."""
    segments: list[list[_Atom] | str] = []
    current: list[_Atom] = []
    for k, atom in enumerate(seq):
        if atom is _A_SLASH:
            segments.append(current)
            current = []
        elif atom is _A_DIRS or atom is _A_ANY:
            if current or (atom is _A_ANY and k + 1 < len(seq)):
                return None
            segments.append("**")
        else:
            current.append(atom)
    if not seq or seq[-1] is not _A_ANY:
        segments.append(current)
    return segments


def _chunked(atoms: list[_Atom] | str, lazy_end: bool = False) -> str:
    """The regular expression of ``[^/]*`` and fixed atoms (``/`` among them): each star but the last takes the
    fewest characters before the fixed part after it, atomically; the last takes the most, or the fewest
    (``lazy_end``: the match that ends first)."""
    chunks: list[list[str]] = [[]]
    for atom in atoms:
        if atom is _A_STAR:
            chunks.append([])
        else:
            chunks[-1].append(atom[1])
    if len(chunks) == 1:
        return "".join(chunks[0])
    middle = "".join(_atomic("[^/]*?" + "".join(chunk)) for chunk in chunks[1:-1])
    return "".join(chunks[0]) + middle + ("[^/]*?" if lazy_end else "[^/]*") + "".join(chunks[-1])


def _any_blocks(seq: list[_Atom]) -> str:
    """The regular expression of atoms with no ``**/`` (``.*`` and ``[^/]*`` between fixed parts): the parts
    between two ``.*`` each placed where it ends first, atomically (a later ``.*`` takes what follows), the last
    part anywhere before the end."""
    blocks: list[list[_Atom]] = [[]]
    for atom in seq:
        if atom is _A_ANY:
            blocks.append([])
        else:
            blocks[-1].append(atom)
    if len(blocks) == 1:
        return _chunked(blocks[0])
    first = _atomic(_chunked(blocks[0], True)) if blocks[0] else ""
    middle = "".join(_atomic(".*?" + _chunked(block, True)) for block in blocks[1:-1])
    return first + middle + ".*" + _chunked(blocks[-1])


_GROUPS = iter(range(1 << 62))


def _atomic(regex: str) -> str:
    """``regex`` as an atomic group (what it first matches is kept, never retried), in every Python: a lookahead
    is atomic in ``re``, and the backreference takes what it matched."""
    name = f"g{next(_GROUPS)}"
    return f"(?=(?P<{name}>{regex}))(?P={name})"


def _segments(pattern: str) -> list[str]:
    """``pattern`` split at each ``/`` outside ``[...]`` and ``{...}`` (escapes kept)."""
    parts: list[str] = []
    depth, start, i, n = 0, 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            close = _class_end(pattern, i)
            if close > i:
                i = close + 1
                continue
        elif c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif c == "/" and not depth:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def _class_end(pattern: str, i: int) -> int:
    """Where the class opened at ``i`` closes, or ``i`` when it does not (as :func:`_translate_class` reads it)."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    first = True
    while j < len(pattern) and (pattern[j] != "]" or first):
        j += 2 if pattern[j] == "\\" and j + 1 < len(pattern) else 1
        first = False
    return j if j < len(pattern) else i


def _segment(seg: str) -> str:
    """One segment's regular expression (it matches within one segment of a path; it holds no ``{a,b}``): with
    two or more ``*`` runs, each run but the last matched atomically, fewest first."""
    if sum(1 for _ in re.finditer(r"\*+", seg)) < 2:
        return _translate_plain(seg)
    chunks: list[list[str]] = [[]]  # the fixed-length parts between the runs of `*`
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i < n and seg[i] == "*":
                i += 1
            chunks.append([])
        elif c == "?":
            chunks[-1].append("[^/]")
            i += 1
        elif c == "[":
            i = _translate_class(seg, i, chunks[-1])
        elif c == "\\" and i + 1 < n:
            chunks[-1].append(re.escape(seg[i + 1]))
            i += 2
        else:
            chunks[-1].append(re.escape(c))
            i += 1
    if len(chunks) < 3:  # an escaped `\*` counted as a run above
        return _translate_plain(seg)
    middle = "".join(_atomic("[^/]*?" + "".join(chunk)) for chunk in chunks[1:-1])
    return "".join(chunks[0]) + middle + "[^/]*" + "".join(chunks[-1])


def _translate_plain(pattern: str) -> str:
    """A glob's regular expression as written, each ``*`` run ``[^/]*`` (it may backtrack: what
    :func:`translate_glob` makes is equivalent, and it reads a glob as this does)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            i = _translate_stars(pattern, i, out)
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            i = _translate_class(pattern, i, out)
        elif c == "{":
            i = _translate_alternates(pattern, i, out)
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _translate_stars(pattern: str, i: int, out: list[str]) -> int:
    """The run of ``*`` at ``i``: ``**`` as a whole segment crosses folders, any other run stays within one."""
    n = len(pattern)
    j = i
    while j < n and pattern[j] == "*":
        j += 1
    whole_segment = j - i == 2 and (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
    if whole_segment and j == n:
        out.append(".*")
    elif whole_segment:
        out.append("(?:.*/)?")
        j += 1
    else:
        out.append("[^/]*")
    return j


def _translate_alternates(pattern: str, i: int, out: list[str]) -> int:
    """The ``{a,b,...}`` group at ``i`` (nested groups and escapes kept whole), each alternative a glob itself."""
    parts, end = _alternatives(pattern, i)
    out.append("(?:" + "|".join(translate_glob(p) for p in parts) + ")")
    return end


def _alternatives(pattern: str, i: int) -> tuple[list[str], int]:
    """The alternatives of the ``{a,b,...}`` group at ``i`` (nested groups and escapes kept whole), and where
    the group ends; ValueError if it is not closed."""
    n = len(pattern)
    depth, j, parts, start = 0, i, [], i + 1
    while j < n:
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "{":
            depth += 1
        elif pattern[j] == "}":
            depth -= 1
            if depth == 0:
                break
        elif pattern[j] == "," and depth == 1:
            parts.append(pattern[start:j])
            start = j + 1
        j += 1
    if j >= n:
        raise ValueError("unclosed alternate group '{'")
    parts.append(pattern[start:j])
    return parts, j + 1


def _translate_class(pattern: str, i: int, out: list[str]) -> int:
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    body: list[str] = []
    first = True
    while j < len(pattern) and (pattern[j] != "]" or first):
        ch = pattern[j]
        if ch == "\\" and j + 1 < len(pattern):
            body.append(re.escape(pattern[j + 1]))
            j += 2
        else:
            body.append("-" if ch == "-" and not first and j + 1 < len(pattern) and pattern[j + 1] != "]"
                        else re.escape(ch))
            j += 1
        first = False
    if j >= len(pattern):
        raise ValueError("unclosed character class '['")
    out.append("[" + ("^/" if negate else "") + "".join(body) + "]")
    return j + 1


GLOB_META = frozenset("*?[{\\")


class Glob:
    """A user's glob, planned for a fast search.

    ``dirs``: leading literal folders of an anchored pattern (``src/app`` of ``src/app/**/*.py``): the search starts
    there instead of walking everything. What remains is one of ``kind``:
    ``all`` (every file), ``name`` (a file-name pattern at any depth), ``top`` (a file-name pattern, direct children
    only) or ``path`` (a pattern over the path below the start folder, checked in Python).
    """

    def __init__(self, pattern: str) -> None:
        raw = pattern.strip() if isinstance(pattern, str) else ""
        if not raw:
            raise ToolError("glob pattern is empty; e.g. '*.py' or 'src/**/*.ts'")
        check_pattern(raw, "the glob pattern")
        while raw.startswith("./"):
            raw = raw[2:]
        if raw.endswith("/"):
            raw += "**"  # "src/" means everything under src
        anchored = raw.startswith("/")
        raw = raw.lstrip("/")
        body = raw
        while body.startswith("**/"):
            body = body[3:]
        self.dirs: list[str] = []
        if not anchored and "/" not in body and body != "**":
            self.kind, rest = ("all" if body == "*" else "name"), body
        else:
            segments = raw.split("/")
            if not any(seg in ("", ".", "..") for seg in segments):
                for seg in segments[:-1]:
                    if GLOB_META.intersection(seg):
                        break
                    self.dirs.append(seg)
            rest = "/".join(segments[len(self.dirs):])
            tail = rest
            while tail.startswith("**/"):
                tail = tail[3:]
            if rest == "**" or tail == "**":
                self.kind = "all"
            elif "/" not in rest:
                self.kind = "top"
            elif "/" not in tail:
                self.kind, rest = "name", tail
            else:
                self.kind = "path"
        self.rest = rest
        try:
            self.regex = compile_uncached(translate_glob(rest), re.S) if self.kind != "all" else None
        except (ValueError, re.error, RecursionError, OverflowError) as exc:
            raise ToolError(f"invalid glob {pattern!r}: {exc}") from None

    @property
    def rg_type(self) -> str | None:
        """The file-name glob ripgrep can filter by (as a file type, which respects .gitignore), if any."""
        return self.rest if self.kind in ("name", "top") else None

    @property
    def by_ending(self) -> bool:
        """Whether a file-name glob is a ``*`` and a literal ending, or a choice of them (``*.py``, ``*.{ts,tsx}``):
        every file ripgrep lists by its type then matches, so no check of the name is needed after it."""
        return self.rg_type is not None and self.rest.startswith("*") and _literal_tail(self.rest[1:])

    def matches(self, rel: str) -> bool:
        """``rel``: a file's path below the start folder (``base`` plus ``dirs``), ``/``-separated."""
        if self.kind == "all":
            return True
        if self.kind == "name":
            return self.regex.fullmatch(rel.rpartition("/")[2]) is not None  # type: ignore[union-attr]
        if self.kind == "top" and "/" in rel:
            return False
        return self.regex.fullmatch(rel) is not None  # type: ignore[union-attr]

    def start(self, root: Path, base: Path) -> Path | None:
        """The folder to search: ``base`` plus the literal ``dirs``, or ``None`` if a walk could never reach it
        (missing, a link, a skipped or ignored folder)."""
        if not self.dirs:
            return base
        chain = ignore_chain(root, base, include_base=True)
        folder = base
        for name in self.dirs:
            if name in SKIP_DIRS:
                return None
            folder = folder / name
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return None
            except OSError:
                return None
            rel = folder.relative_to(root).as_posix()
            if chain and ignored(chain, rel, True):
                return None
            level = read_level(root, folder, rel + "/")
            if level:
                chain.append(level)
        return folder


# ------------------------------------------------------------------------------------------------- ignore files
def parse_ignore(text: str) -> Rules:
    """The rules of one .gitignore-style file; the run's deadline is checked at each rule (a committed file of
    rules that each compile slowly would hold the run), and a rule whose classes span too much is skipped as a
    malformed one is."""
    from ...core.limits import Deadline

    clock = Deadline.current()
    rules: Rules = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if clock is not None:
            clock.check("reading ignore files", "compiling their rules")
        if not line.endswith("\\ "):
            line = line.rstrip()
        if not line:
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
        anchored = "/" in line
        line = line.lstrip("/") if line.startswith("/") else line
        if not line:
            continue
        if not anchored and not line.startswith("**/"):
            line = "**/" + line
        try:
            rules.append((compile_uncached(translate_glob(line), re.S), negated, dir_only))
        except (ValueError, re.error):
            continue  # ripgrep skips a malformed line too
    return rules


def _literal_tail(tail: str) -> bool:
    """Whether ``tail`` is literal, or literal with one closing ``{a,b}`` of literal, non-empty choices."""
    opening = tail.find("{")
    if opening < 0:
        return not GLOB_META.intersection(tail) and "]" not in tail and "}" not in tail
    choices = tail[opening + 1:-1].split(",")
    return (tail.endswith("}") and _literal_tail(tail[:opening]) and all(choices)
            and all(_literal_tail(c) and "{" not in c for c in choices))


# -------------------------------------------------------------------- what an override glob may let through
def name_ends(pattern: str) -> tuple[str, ...] | None:
    """Literal endings, one of which every name matching the file-name glob ``pattern`` has (``*.py``: ``.py``;
    ``*.{ts,tsx}``: ``.ts`` and ``.tsx``); ``None`` when it has none to rely on (``*``, ``*.py[cod]``)."""
    meta = [i for i, c in enumerate(pattern) if c in GLOB_META or c in "]}"]
    if not meta:
        return (pattern,) if pattern else None
    last = meta[-1]
    if pattern[last] == "\\":
        return None
    if last + 1 < len(pattern):
        return (pattern[last + 1:],)
    opening = pattern.rfind("{", 0, last)
    if pattern[last] != "}" or opening < 0:
        return None
    body = pattern[opening + 1:last]
    if GLOB_META.intersection(body) or "]" in body or "}" in body:
        return None
    before = [i for i in meta if i < opening]
    lead = pattern[before[-1] + 1 if before else 0:opening]
    ends = tuple(lead + alternative for alternative in body.split(","))
    return ends if all(ends) else None


_STAR, _ANY = object(), object()


MAY_MATCH_SPAN = 4096  # code points past which a class of an ignore rule is taken to match, uncompiled


class _Class:
    """A character class of an ignore rule, compiled when first matched (a wide one is taken to match)."""

    __slots__ = ("source", "regex")

    def __init__(self, source: str) -> None:
        self.source = source
        self.regex: re.Pattern[str] | None = None

    def matches(self, ch: str) -> bool:
        regex = self.regex
        if regex is None:
            regex = self.regex = compile_narrow(self.source, MAY_MATCH_SPAN, re.S)
            if regex is None:  # compiling it walks its code points: say it may
                return True
        return regex.fullmatch(ch) is not None


def may_ignore(text: str, ends: tuple[str, ...]) -> bool:
    """Whether a rule (not a ``!`` one) of the ignore file ``text`` may match a name ending with one of ``ends``:
    may, whenever that cannot be ruled out (a rule with ``\\`` or ``{``, or one ending in ``*``)."""
    from ...core.limits import Deadline

    clock = Deadline.current()
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line[0] in "#!":
            continue
        if clock is not None:
            clock.check("reading ignore files", "looking at their rules")
        name = line.rstrip("/").rpartition("/")[2]
        if name and _may_end_with(name, ends):
            return True
    return False


def _may_end_with(name: str, ends: tuple[str, ...]) -> bool:
    tokens: list[object] = []
    i = 0
    while i < len(name):
        c = name[i]
        if c in "\\{":
            return True
        if c == "[":
            out: list[str] = []
            try:
                i = _translate_class(name, i, out)
            except ValueError:
                return True
            tokens.append(_Class(out[0]))  # compiled only if the ending reaches it: a rule may hold thousands
            continue
        tokens.append(_STAR if c == "*" else _ANY if c == "?" else c)
        i += 1
    for end in ends:
        k = len(tokens) - 1
        for ch in reversed(end):
            token = tokens[k] if k >= 0 else None
            if token is None or token is _STAR:
                break
            if not (token is _ANY or token == ch or (isinstance(token, _Class) and token.matches(ch))):
                break
            k -= 1
        else:
            return True  # the rule's names can end as ``end`` does
        if token is _STAR:
            return True
    return False


class Level:
    """The ignore rules read in one folder: ``prefix`` is its workspace-relative path plus ``/`` ("" at the root)."""

    __slots__ = ("prefix", "rules", "has_git")

    def __init__(self, prefix: str, rules: dict[str, Rules], has_git: bool) -> None:
        self.prefix, self.rules, self.has_git = prefix, rules, has_git


MAX_IGNORE_BYTES = 1 << 20  # what is read of one ignore file (or .gitmodules): its rules are parsed in this process


class IgnoreText(NamedTuple):
    """What :func:`read_ignore` read of an ignore file: its text, and its size when only the first
    :data:`MAX_IGNORE_BYTES` (whole lines) were read (``0`` when the text is all of it)."""

    text: str
    cut_from: int = 0


def read_ignore(path: Path, root: Path) -> IgnoreText | None:
    """The text of the ignore file ``path`` (``.gitignore``, ``.ignore``, ``.rgignore``, ``info/exclude``,
    ``.gitmodules``), or ``None`` where it is not read: missing, not a regular file, or a symbolic link leading
    outside the workspace ``root``. The one rule every reader of ignore files here keeps, and the one the confined
    ripgrep keeps (it follows a link, and Landlock lets it read only below the root): a link to an outside file is
    never read, so no answer depends on what such a file holds. What was opened is checked, not the path it was
    opened by (a file swapped for a link meanwhile is seen); ``O_NONBLOCK``: a FIFO does not hold the open. At
    most :data:`MAX_IGNORE_BYTES` are read, cut after the last whole line: the rules are parsed here, with the
    interpreter held, and a program may write a file of 128 MiB."""
    read = read_regular_within(path, os.fspath(root), MAX_IGNORE_BYTES)
    if read is None:
        return None
    data, info = read
    cut_from = 0
    if len(data) > MAX_IGNORE_BYTES:
        cut_from = max(info.st_size, len(data))
        data = data[:data.rfind(b"\n", 0, MAX_IGNORE_BYTES) + 1]  # whole lines only: none if there is no "\n"
    return IgnoreText(data.decode("utf-8", errors="replace"), cut_from)


def read_ignore_file(path: Path, root: Path) -> str | None:
    """:func:`read_ignore`'s text; a file cut to :data:`MAX_IGNORE_BYTES` is noted for the model (the rules past
    the cut are not applied where CodeAct reads the rules itself)."""
    read = read_ignore(path, root)
    if read is None:
        return None
    if read.cut_from:
        note_cut(path, root, read.cut_from, "its rules past that are not applied by the searches' own checks "
                                            "(ripgrep still reads them all)")
    return read.text


def note_cut(path: Path, root: Path, size: int, what: str) -> None:
    """Tell the model that only the first :data:`MAX_IGNORE_BYTES` of ``path`` (``size`` bytes) were read."""
    from ...core import notices

    shown = os.path.relpath(path, root) if str(path).startswith(str(root)) else path.name
    notices.note("", f"{shown} holds {size:,} bytes: only its first {MAX_IGNORE_BYTES >> 20} MiB (whole lines) "
                     f"were read; {what}")


def read_level(root: Path, folder: Path, prefix: str, names: set[str] | None = None) -> Level | None:
    """The ignore rules of ``folder`` (below the workspace ``root``), as :func:`read_ignore_file` reads them."""
    if names is None:
        try:
            names = set(os.listdir(folder))
        except OSError:
            return None
    rules: dict[str, Rules] = {}
    for kind in IGNORE_KINDS:
        if kind in names:
            text = read_ignore_file(folder / kind, root)
            found = parse_ignore(text) if text else []
            if found:
                rules[kind] = found
    has_git = ".git" in names
    if has_git and (folder / ".git").is_dir():
        text = read_ignore_file(folder / ".git" / "info" / "exclude", root)
        found = parse_ignore(text) if text else []
        if found:
            rules["exclude"] = found
    if not rules and not has_git:
        return None
    return Level(prefix, rules, has_git)


def ignored(chain: list[Level], rel: str, is_dir: bool) -> bool:
    """Whether the workspace-relative ``rel`` is ignored: ripgrep's precedence (kind first, deepest folder next).

    In a git work tree a nested repository starts afresh (the outer .gitignore does not apply inside it); in a
    workspace that is not one, ripgrep (``--no-require-git``) applies every .gitignore above, and so does this."""
    in_git = bool(chain) and chain[0].prefix == "" and chain[0].has_git
    for kind in (*IGNORE_KINDS, "exclude"):
        git_kind = kind in (".gitignore", "exclude")
        for level in reversed(chain):
            rules = level.rules.get(kind)
            if rules:
                sub = rel[len(level.prefix):]
                for regex, negated, dir_only in reversed(rules):
                    if dir_only and not is_dir:
                        continue
                    if regex.fullmatch(sub):
                        return not negated
            if git_kind and level.has_git and in_git:
                break  # .gitignore files above a repository's root do not apply inside it
    return False


def ignore_chain(root: Path, base: Path, *, include_base: bool) -> list[Level]:
    """The ignore levels from the workspace root down to ``base`` (its own level only with ``include_base``)."""
    chain: list[Level] = []
    parts = [] if base == root else list(base.relative_to(root).parts)
    folder, prefix = root, ""
    for part in parts + ([None] if include_base else []):  # type: ignore[list-item]
        level = read_level(root, folder, prefix)
        if level:
            chain.append(level)
        if part is None:
            break
        folder, prefix = folder / part, prefix + part + "/"
    return chain


def walk(root: Path, base: Path, max_depth: int | None = None) -> Iterator[str]:
    """Files below the folder ``base`` as ``/``-paths relative to it, after the ignore rules; links not followed."""
    base_rel = "" if base == root else base.relative_to(root).as_posix() + "/"
    stack: list[tuple[Path, str, list[Level], int]] = [(base, "", ignore_chain(root, base, include_base=False), 1)]
    while stack:
        folder, rel_dir, chain, depth = stack.pop()
        try:  # by a descriptor checked to lie below the root: a folder swapped for a link is not listed
            fd = confine.open_below(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            continue
        finally:
            os.close(fd)
        level = read_level(root, folder, base_rel + rel_dir, {e.name for e in entries})
        if level:
            chain = [*chain, level]
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    is_dir = True
                elif entry.is_file(follow_symlinks=False):
                    is_dir = False
                else:
                    continue  # symbolic links, sockets, devices
            except OSError:
                continue
            if entry.name == ".git" or (is_dir and (entry.name in SKIP_DIRS or
                                                   (max_depth is not None and depth >= max_depth))):
                continue  # a .git file too: a worktree's or a submodule's pointer to its repository
            rel = rel_dir + entry.name
            if chain and ignored(chain, base_rel + rel, is_dir):
                continue
            if is_dir:
                stack.append((folder / entry.name, rel + "/", chain, depth + 1))
            else:
                yield rel


class Reach:
    """Whether a walk from ``start`` would reach a file: not ignored, not in an ignored or skipped folder.

    Needed after ripgrep ran with an override glob (which beats .gitignore); cached per folder."""

    def __init__(self, root: Path, start: Path) -> None:
        self.root, self.start = root, start
        self.base_rel = "" if start == root else start.relative_to(root).as_posix() + "/"
        self.chains: dict[str, list[Level] | None] = {"": ignore_chain(root, start, include_base=True)}

    def _chain_of(self, rel_dir: str) -> list[Level] | None:  # None: the folder is not reachable
        if rel_dir not in self.chains:
            parent, _, name = rel_dir.rpartition("/")
            above = self._chain_of(parent)
            if above is None or name in SKIP_DIRS or ignored(above, self.base_rel + rel_dir, True):
                self.chains[rel_dir] = None
            else:
                level = read_level(self.root, self.start / rel_dir, self.base_rel + rel_dir + "/")
                self.chains[rel_dir] = [*above, level] if level else above
        return self.chains[rel_dir]

    def ok(self, rel: str) -> bool:
        chain = self._chain_of(rel.rpartition("/")[0])
        return chain is not None and not ignored(chain, self.base_rel + rel, False)
