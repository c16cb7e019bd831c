"""grep's ripgrep engine: ripgrep's ``path NUL line:text`` records read as they come, only what can be returned
kept (:class:`FileMatches`); when far more lines match than that, the files that match are searched in path order
instead. Where ripgrep prints what this reader does not know, the Python engine (:mod:`.python_grep`) answers."""
from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby
from operator import itemgetter
from pathlib import Path

from ...core.limits import Deadline
from ...core.pathnames import quote
from ...errors import ToolError
from ..proc import Child
from ..textfile import MAX_LINE_CHARS, LineCursor, clip
from . import regex_worker
from .python_grep import Search, binary_file, first_in_files_in_worker
from .results import Answer, FirstItems
from .ripgrep import FS, LONG_COLUMNS, command, confined_reads, gathered, rel_path, rg_binary
from .scope import SKIPPED_MARKS, skipped
from .walk import Glob

FLOOD_FACTOR, FLOOD_MIN = 20, 30_000  # beyond max(FLOOD_FACTOR * max_results, FLOOD_MIN) matches: sorted re-run
_OMITTED = re.compile(rb"\[Omitted long (?:matching line|line with \d+ matches)\]")  # ripgrep 14; 13 and older
_BINARY_WARNING = re.compile(rb"(.*): WARNING: stopped searching binary file after match \(found .+ byte around "
                             rb"offset \d+\)")
_MAX_RECORD = LONG_COLUMNS + (1 << 16)  # a path and a line that ripgrep printed in full
_RECORD = re.compile(r"(?:\./)?([^\0\n]*)\0([0-9]+):([^\n]*)")  # path (its "./" dropped, as rel_path does), line, text
_PRINTED = ["--no-heading", "--with-filename", "--line-number", "--null", "--color", "never", "--max-columns",
            str(LONG_COLUMNS)]  # the records read here: path NUL line:text, a long line omitted


class Flood(Exception):
    """Far more lines match than can be returned: the sorted re-run answers."""


class Unknown(Exception):
    """ripgrep printed something this parser does not know: the Python search answers."""


def rg_can_run(pattern: str) -> bool:
    """Whether ripgrep reads ``pattern`` as Python does (it refuses look-arounds and back-references itself)."""
    return "[[:" not in pattern and "\\p" not in pattern and "\\P" not in pattern


def _named_files_command(rg: str, regex: re.Pattern[str], ignore_case: bool, names: Sequence[str]) -> list[str]:
    """ripgrep searching ``names`` only (which it reads even if ignored, or binary)."""
    return [rg, "--no-config", "--no-messages", *(["--ignore-case"] if ignore_case else []), *_PRINTED,
            "--regexp", regex.pattern, "--", *names]


def search_tree(search: Search, rg: str, start: Path, ignore_case: bool, parents: Sequence[str]) -> bool:
    """The matches found by ripgrep; ``False`` when the Python search must answer.

    ripgrep searches in parallel, in no fixed order, and prints each file's matches together; its output is
    read as it comes and only what can be returned is kept. When far more lines match than that, the run is
    stopped and the files that match are searched in path order until enough are found: the same answer.
    """
    # no --max-count: ripgrep would stop reading a file early and miss a NUL byte that makes it binary
    cmd = command(rg, search.matcher, parents)
    if ignore_case:
        cmd.append("--ignore-case")
    query = ["--regexp", search.regex.pattern, "."]
    returnable = min(search.found.count, search.found.budget // (search.extra + 2) + 1)  # what can be returned at most
    flood = max(FLOOD_FACTOR * returnable, FLOOD_MIN)
    search.named = search.matcher.kind == "all" or search.matcher.by_ending  # ripgrep lists only such names
    try:
        return read_lines(search, [*cmd, *_PRINTED, *query], start, flood)
    except Unknown:
        return False
    except Flood:
        search.found = FirstItems(search.found.count, search.found.budget, search.found.size)
        return _first_files(search, [*cmd, "--count", "--null", *query], start)
    finally:
        search.named = search.matcher.kind == "all"


def search_tracked(search: Search, rg: str | None, start: Path, names: list[str], ignore_case: bool) -> None:
    """Search ``names`` (below ``start``: tracked files .gitignore rules match, which no walk reaches) too:
    given to ripgrep by name (``rg``), else in Python (where the deadline can stop it)."""
    found = search.found
    before, saved = found.seen, (list(found.items), found.held, found.limit)
    reach, named = search.reach, search.named
    search.reach, search.named = None, True  # chosen already: the names match, and git does not ignore them
    try:
        texts = [rel for rel in names if not binary_file(start / rel)]  # ripgrep reads a named binary file
        done = False
        if rg is not None and texts:
            try:
                done = read_lines(search, _named_files_command(rg, search.regex, ignore_case, texts), start, 1 << 62)
            except (Unknown, Flood):  # read again in Python, from where it was
                found.seen, (found.items, found.held, found.limit) = before, saved
        if not done:
            with search.deadline.interrupting("grep", "searching files"):
                for rel in texts:
                    search.deadline.check("grep", "searching files")
                    search.file(start / rel, rel, 1 << 62)
    finally:
        search.reach, search.named = reach, named
    if search.total is not None:
        search.total += search.found.seen - before


def read_lines(search: Search, cmd: list[str], start: Path, flood: int) -> bool:
    """Read ripgrep's ``path NUL line:text`` records; raises Flood past ``flood`` of them."""
    child = Child.start(cmd, start, search.deadline, "grep", "searching with ripgrep", stream=True,
                        confined=confined_reads(cmd[0]))
    if child is None:
        return False
    file = FileMatches(search, start)
    rest, got, records = b"", False, 0
    try:
        with child:
            for chunk in gathered(child):
                got = True
                data = rest + chunk
                end = data.rfind(b"\n")
                block, rest = (data[:end], data[end + 1:]) if end >= 0 else (b"", data)
                if len(rest) > _MAX_RECORD:
                    raise Unknown
                if not block:
                    continue
                skip = any(mark in data for mark in SKIPPED_MARKS)
                near = search.stamped is not None and search.stamped.near(data)
                taken = file.bulk(block, skip, near)
                if taken is None:
                    records = file.each(block.split(b"\n"), skip, near, records, flood)
                else:
                    records += taken
                    if records > flood:
                        raise Flood
            file.switch(None, False, False)
    finally:
        file.close()
    return not (child.returncode == 2 and not got)  # 2 and silent: ripgrep could not run this pattern


def _first_files(search: Search, cmd: list[str], start: Path) -> bool:
    """The first matches in path order: the files that match and their counts (ripgrep, in parallel), sorted,
    then searched one by one until enough are found. The counts give the total."""
    child = Child.start(cmd, start, search.deadline, "grep", "counting the lines that match", stream=True,
                        confined=confined_reads(cmd[0]))
    if child is None:
        return False
    names: list[str] = []
    rest, got, total = b"", False, 0
    with child:
        for chunk in gathered(child):
            got = True
            data = rest + chunk
            records = data.split(b"\n")
            rest = records.pop()
            skip = any(mark in data for mark in SKIPPED_MARKS)
            near = search.stamped is not None and search.stamped.near(data)
            for record in records:
                raw, nul, count = record.rpartition(b"\0")
                if not nul or not count.isdigit():
                    continue  # not a count record (ripgrep's binary-file warning)
                rel = rel_path(raw)
                if not (skip and skipped(rel)) and search.accepts(rel, near):
                    names.append(rel)
                    total += int(count)
    if child.returncode == 2 and not got:
        return False
    search.total = total
    if not regex_worker.interruptible():  # Python's re could backtrack for ever here: in a killable process
        for hit in first_in_files_in_worker(start, sorted(names), search.regex, search.found.count,
                                             search.found.budget, search.extra, search.deadline):
            search.found.add(tuple(hit))
        return True
    search.first_in_files(start, sorted(names))
    return True


def search_one_file(file: Path, shown: str, regex: re.Pattern[str], ignore_case: bool, max_results: int,
                    budget: int, deadline: Deadline) -> Answer | None:
    """One file searched by ripgrep (off the main thread, where Python's ``re`` could not be stopped), read as the
    directory search reads it; ``None`` when Python must answer. A binary file is told apart first, here, as the
    Python search tells it (ripgrep searches an explicitly named binary file)."""
    if binary_file(file):
        raise ToolError(f"{quote(shown)} is a binary file; grep searches text files")
    rg = rg_binary()
    if rg is None or not rg_can_run(regex.pattern):
        return None
    extra = 36 + len(shown) - len(file.name)
    found = FirstItems(max_results, budget, lambda hit: len(hit[0]) + len(hit[2]) + extra)
    search = Search(regex, Glob("**"), None, None, found, extra, deadline)
    try:
        if not read_lines(search, _named_files_command(rg, regex, ignore_case, [file.name]), file.parent, 1 << 62):
            return None
    except Unknown:
        return None
    hits, _ = search.found.result()
    return Answer([(shown, n, t) for _, n, t in hits], max(search.found.seen, len(hits)))


class FileMatches:
    """The matches of the file ripgrep is printing, held until its output ends (a binary file's are dropped).

    ripgrep prints a file's lines in order, so once that file's first ``keep`` lines (or ``budget`` bytes) are held,
    no later line of it can be returned: it is only counted. Lines are held as ripgrep's raw ``N:text`` records and
    decoded once, when the file ends. A block of plain records (:meth:`bulk`) is read in a few passes instead: every
    file in it but the last is whole and goes straight to the answer."""

    def __init__(self, search: Search, start: Path) -> None:
        self.search, self.start = search, start
        self.raw: bytes | None = None
        self.rel = ""
        self.lines: list[bytes] | None = None  # the records of the file being read; None: not wanted
        self.keep, self.budget = search.found.count, search.found.budget
        self.size = search.extra - 4  # at most a record's size as returned, less its text ("N:" is in the record)
        self.held = 0
        self.past = 0  # lines counted, not held
        self.cut_at: int | None = None  # the first line not held
        self.cursor: LineCursor | None = None
        self.taken: set[str] = set()  # the files whose output ended

    def each(self, lines: list[bytes], skip: bool, near: bool, records: int, flood: int) -> int:
        """Read ``lines`` one by one; the number of records read in all (``records`` before)."""
        for line in lines:
            path, nul, body = line.partition(b"\0")
            if not nul:
                warned = _BINARY_WARNING.fullmatch(line)
                if warned is None:
                    raise Unknown
                self.binary(warned[1])
                continue
            records += 1
            if records > flood:
                raise Flood
            if path != self.raw:
                self.switch(path, skip, near)
            self.take(body)
        return records

    def take(self, body: bytes) -> None:
        """One record of the current file: held, or (past what can be returned) only counted."""
        lines = self.lines
        if lines is not None:
            if self.cut_at is None and len(lines) < self.keep and self.held <= self.budget:
                lines.append(body)
                # never above the line's size as returned (ensure_ascii JSON; cut at 2,000)
                self.held += min(len(body), MAX_LINE_CHARS) + self.size
            else:
                self.count_past(body)

    def bulk(self, block: bytes, skip: bool, near: bool) -> int | None:
        """Read a block of whole records in a few C-speed passes; how many, or ``None`` when :meth:`each` must
        read it (a line that is not a plain record, a CR, a line ripgrep did not print, bytes that are not UTF-8).
        The files in it are whole but the first (it may go on from the previous block) and the last (it may go on,
        or a binary-file warning may follow): those two are read as :meth:`each` reads them. The whole ones go to
        the answer uncut: a file's lines past what can be returned sort after what is returned (``found`` drops
        them as it drops them from :meth:`_merge`), and a block is at most a read's size."""
        count = block.count(b"\n") + 1
        if block.count(b"\0") != count or b"\r" in block or b"[Omitted long" in block or FS[0] != "utf-8":
            return None
        try:
            records = _RECORD.findall(block.decode("utf-8"))
        except UnicodeDecodeError:
            return None
        if len(records) != count:
            return None
        runs = [(rel, len(list(group))) for rel, group in groupby(map(itemgetter(0), records))]
        first = runs[0][1] if self.raw is not None and block.startswith(self.raw + b"\0") else 0
        last = runs[-1][1]
        if first:
            self._take_raw(block.split(b"\n", first)[:first])
            if first == count:
                return count
        whole = records[first:count - last]
        if whole:
            self.switch(None, skip, near)
            self._commit(whole, [rel for rel, _ in runs[1 if first else 0:-1]], skip, near)
        tail = block.rsplit(b"\n", last)
        tail = tail[1:] if len(tail) > last else tail
        self.switch(tail[0].partition(b"\0")[0], skip, near)
        self._take_raw(tail)
        return count

    def _take_raw(self, lines: list[bytes]) -> None:
        for line in lines:
            self.take(line.partition(b"\0")[2])

    def _commit(self, records: list[tuple[str, str, str]], files: list[str], skip: bool, near: bool) -> None:
        """Whole files' records (``path``, ``line``, ``text``), ``files`` their paths in order: to the answer."""
        if len(set(files)) != len(files) or not self.taken.isdisjoint(files):
            raise Flood  # a file's output in two pieces: not what this reader relies on; the sorted re-run answers
        self.taken.update(files)
        search = self.search
        if skip or near or not search.named or search.reach is not None:
            wanted = {rel for rel in files if not (skip and skipped(rel)) and search.accepts(rel, near)}
            records = [record for record in records if record[0] in wanted]
            if not records:
                return
        paths, numbers, texts = zip(*records)
        if max(map(len, texts)) > MAX_LINE_CHARS:
            texts = tuple(text if len(text) <= MAX_LINE_CHARS else clip(text) for text in texts)
        hits = list(zip(paths, map(int, numbers), texts))
        search.found.extend(hits, sum(map(len, texts)) + sum(map(len, paths)) + search.extra * len(hits))

    def switch(self, raw: bytes | None, skip: bool, near: bool) -> None:
        """The previous file's output ended: keep its matches; start collecting ``raw``'s."""
        if self.lines is not None:
            self._merge()
        if self.raw is not None:
            self.taken.add(self.rel)
        self.close()
        self.raw, self.lines = raw, None
        if raw is None:
            return
        self.rel = rel = rel_path(raw)
        if rel in self.taken:
            raise Flood  # a file's output in two pieces: not what this reader relies on; the sorted re-run answers
        if not (skip and skipped(rel)) and self.search.accepts(rel, near):
            self.lines, self.held, self.past, self.cut_at = [], 0, 0, None
            self.size = len(rel) + self.search.extra - 4

    def count_past(self, body: bytes) -> None:
        if self.cut_at is None:
            self.cut_at = int(body.partition(b":")[0])
        self.past += 1

    def _merge(self) -> None:
        rel, found, lines = self.rel, self.search.found, self.lines
        self.lines = None
        if not lines:
            return
        joined = b"\n".join(lines)
        hits: list[tuple[str, int, str]] = []
        if b"\r" in joined or b"[Omitted long" in joined:  # a final CR to drop, a line ripgrep did not print
            for body in lines:
                number, _, raw = body.partition(b":")
                hits.append((rel, int(number), self._text(int(number), raw)))
        else:  # one decode for the file (an invalid byte sequence ends at its line's end either way)
            for record in joined.decode("utf-8", "replace").split("\n"):
                number_text, _, text = record.partition(":")
                hits.append((rel, int(number_text), text if len(text) <= MAX_LINE_CHARS else clip(text)))
        found.extend(hits, sum(len(hit[2]) for hit in hits) + (self.size + 4) * len(hits))
        found.seen += self.past
        if self.cut_at is not None:
            found.bar((rel, self.cut_at, ""))
        self.lines = None

    def _text(self, number: int, raw: bytes) -> str:
        if _OMITTED.fullmatch(raw):  # too long to print (or a line saying so): read it back, cut
            if self.cursor is None:
                self.cursor = LineCursor(self.start / self.rel, self.search.deadline)
            text = self.cursor.text(number)
            return raw.decode("utf-8", "replace") if text is None else text
        return clip(raw.decode("utf-8", "replace"))

    def binary(self, raw: bytes) -> None:
        """ripgrep stopped reading ``raw``: binary. Its matches are dropped."""
        rel = rel_path(raw)
        if self.raw is not None and rel == self.rel:
            self.lines = None
        elif rel in self.taken:
            raise Flood
        self.taken.add(rel)

    def close(self) -> None:
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None
