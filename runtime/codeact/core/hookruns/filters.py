"""awk's and sed's own programs, read as the tools read them: one that can run a command is not known.

Their program (the first word after their options, ``-e``'s and ``--source``'s values) may run a command
(``awk '{system("sh " $0)}'``, ``print "" | c``, ``sed '1e'``, ``sed 's%^%sh %e'``): one that can makes the hooks
file Unread (a plain ``awk '{print $1 "|" $2}'`` stays data, and so does a later command's ``|``); one read from
stdin or a descriptor (``-f /dev/fd/3``, ``-f -``) is not known. A program file (``-f x.awk``) is protected like a
script."""
from __future__ import annotations

import os
import posixpath
import re

from .bounds import Unread
from .names import AWKS, FILTERS, SEPARATOR
from .words import nested_words

# Their long options (as getopt_long reads them, abbreviated too) that take a value: the short option they are
_FILTER_LONG = {"awk": {"--assign": "v", "--field-separator": "F", "--file": "f", "--source": "e", "--exec": "E",
                        "--include": "i", "--load": "l", "--characters-as-bytes": "", "--csv": "", "--traditional": "",
                        "--copyright": "", "--debug": "", "--dump-variables": "", "--gen-pot": "", "--help": "",
                        "--lint": "", "--bignum": "", "--no-optimize": "", "--non-decimal-data": "",
                        "--optimize": "", "--profile": "", "--pretty-print": "", "--posix": "", "--re-interval": "",
                        "--sandbox": "", "--trace": "", "--use-lc-numeric": "", "--version": ""},
                "sed": {"--expression": "e", "--file": "f", "--line-length": "l", "--in-place": "",
                        "--debug": "", "--follow-symlinks": "", "--null-data": "", "--zero-terminated": "",
                        "--posix": "", "--quiet": "", "--silent": "", "--regexp-extended": "", "--sandbox": "",
                        "--separate": "", "--unbuffered": "", "--binary": "", "--help": "", "--version": ""}}
_FILTER_SHORT = {"awk": ("FvfeEilW", "dDLop"), "sed": ("efl", "i")}  # a value: required, only joined
def from_stdin(path: str) -> bool:
    """Whether the program file ``path`` may be stdin or another descriptor, however spelled: ``-``, a path
    through ``/dev/`` (``/dev/stdin``, ``//dev/stdin``, ``/dev/./stdin``, ``/DEV/stdin`` as a case-insensitive
    disk reads it, ``/dev/fd/0``, ``/dev/tty``; not ``/dev/null``) or ``/proc/`` (``/proc/$BASHPID/fd/0``,
    ``/proc/self/root/dev/stdin``), one climbing to it (``../../dev/stdin``), or a pattern at the top
    (``/d?v/stdin``)."""
    if path in ("-", "<", "<(", "<<", "<<<"):
        return True
    low = path.lower().replace("\\", "/")
    for form in (low, posixpath.normpath(re.sub(r"/+", "/", low))):
        parts = [part for part in form.split("/") if part not in ("", ".")]
        if form.startswith("/") and parts and (parts[0] in ("dev", "proc") or set(parts[0]) & set("*?[")):
            return parts != ["dev", "null"]
        if any(part in ("dev", "proc") and following.startswith(("std", "fd", "tty", "pts", "self", "thread"))
               or part == "proc" and following[:1].isdigit() or part == "dev" and set(following) & set("*?[")
               for part, following in zip(parts, parts[1:])):
            return True
    return False


def _awk_runs(program: str) -> bool:
    """Whether the awk ``program`` may run a command: ``system(``, a ``|`` (``print | cmd``, ``cmd | getline``,
    gawk's ``|&``) or an ``@`` (``@include``, ``@load``, an indirect call) outside its strings, regular
    expressions and comments. A ``/`` is a regular expression where no operand comes before it (after an
    operator, ``(``, ``,``, ``print``, ``printf``, ``return``, ``getline``, ``in``), else a division (after a
    name, a number, ``1.``, ``)``, ``]``, ``++``, a string; a line continued with ``\\`` keeps what came before). One
    pass: a regular expression not closed on its line is read as code (the safe side), and so is any later one
    that line holds; a regular expression or comment that holds ``system``, ``@`` or a ``|`` beside code-like
    text (white space, ``;``, ``"``, ``(``) counts as code too (a guess gone wrong fails closed)."""
    kept: list[str] = []
    at, end, last, word, open_until = 0, len(program), "", "", -1
    while at < end:
        char = program[at]
        if char == "\\" and program[at + 1:at + 2] == "\n":  # a line continued: what came before stays
            at += 2
            continue
        operand = (last.isalnum() or last in tuple("_$)].+-\"")) and word not in _AWK_BEFORE_REGEX
        if char == '"' or (char == "/" and at > open_until and not operand):
            close = _awk_literal_end(program, at)
            if close is not None:
                if char == "/" and _awk_hides_code(program[at:close]):
                    kept.append(program[at:close])
                at, last, word = close, "a", ""  # a string or regex: an operand, left out
                continue
            open_until = program.find("\n", at) % (end + 1)  # not closed: the rest of the line is code
        if char == "#":
            close = program.find("\n", at) % (end + 1)
            if _awk_hides_code(program[at:close]):
                kept.append(program[at:close])
            at = close
            continue
        kept.append(char)
        if char.isalnum() or char == "_":  # the name or number before, as one word
            word = word + char if at and (program[at - 1].isalnum() or program[at - 1] == "_") else char
        elif char not in " \t":
            word = ""
        last = "" if char == "\n" else last if char in " \t" else char
        at += 1
    return bool(re.search(r"system\s*\(|(?<!\|)\|(?!\|)|@", "".join(kept)))


_AWK_BEFORE_REGEX = frozenset(("print", "printf", "return", "getline", "in", "case", "do", "else"))


def _awk_hides_code(span: str) -> bool:
    """Whether a span read as a regular expression or comment may be code misread: it holds ``system``, an ``@``,
    or a ``|`` beside white space, ``;``, ``"`` or ``(`` (``/a|b/`` does not)."""
    return "system" in span or "@" in span or ("|" in span and any(char in span for char in " \t;\"("))


def _awk_literal_end(program: str, at: int) -> int | None:
    """The end of the string (``"...``) or regular expression (``/...``, its classes ``[...]`` holding a
    ``/`` too) starting at ``program[at]``; None where the line ends first."""
    quote, at, bracket = program[at], at + 1, False
    while at < len(program) and program[at] != "\n":
        char = program[at]
        if char == "\\":
            at += 2
            continue
        if quote == "/" and char == "[" and not bracket:
            bracket = True
            at += 1 + (program[at + 1:at + 2] == "^")
            at += program[at:at + 1] == "]"  # `[]x]`: a first `]` is itself
            continue
        if bracket and char == "]":
            bracket = False
        elif char == quote and not bracket:
            return at + 1
        at += 1
    return None


def _sed_runs(script: str, strict: bool = True) -> bool:
    """Whether the GNU sed ``script`` may run a command: an ``e`` command (after any address: ``1e``, ``$e``,
    ``/x/e``) or an ``s`` command's ``e`` flag, whatever its delimiter (``s%^%sh %e``); a script this reading
    does not follow counts as one that may where ``strict`` (else only an ``e`` read before it does)."""
    reader = _SedScript(script)
    while True:
        reader.skip(" \t\n;")
        if reader.at >= reader.end:
            return False
        before = reader.at
        if reader.runs():
            if strict or reader.ran:
                return True
            reader.at = max(reader.at, before + 1)  # not parsed: read on, for an `e` after it


class _SedScript:
    """:func:`_sed_runs`' reading of a sed script, a command at a time."""

    def __init__(self, script: str) -> None:
        self.script, self.at, self.end = script, 0, len(script)
        self.ran = False  # an `e` command or flag was read

    def skip(self, chars: str) -> None:
        while self.at < self.end and self.script[self.at] in chars:
            self.at += 1

    def delimited(self, delimiter: str) -> bool:
        """Past the unescaped ``delimiter``; False where none closes it."""
        while self.at < self.end and self.script[self.at] != delimiter:
            self.at += 2 if self.script[self.at] == "\\" else 1
        self.at += 1
        return self.at <= self.end

    def rest_of_line(self) -> None:
        """To the line's end (``a text``, ``w file``, a comment; a ``\\`` continues it)."""
        while self.at < self.end and self.script[self.at] != "\n":
            self.at += 2 if self.script[self.at] == "\\" else 1

    def address(self) -> bool:
        """Past one address (``3``, ``0~2``, ``$``, ``/re/I``, ``\\%re%``); False where a regex is not closed."""
        char = self.script[self.at] if self.at < self.end else ""
        if char.isdigit():
            self.skip("0123456789~")
        elif char == "$":
            self.at += 1
        elif char in ("/", "\\"):
            self.at += 1 + (char == "\\")
            if self.at > self.end or not self.delimited(self.script[self.at - 1]):
                return False
            self.skip("IM")
        return True

    def runs(self) -> bool:
        """Whether the command at ``at`` (its addresses first) may run one; past it."""
        if not self.address():
            return True
        self.skip(" \t")
        if self.at < self.end and self.script[self.at] == ",":
            self.at += 1
            self.skip(" \t")
            if self.at < self.end and self.script[self.at] in "+~":
                self.skip("+~0123456789")
            elif not self.address():
                return True
        self.skip(" \t!")
        if self.at >= self.end:
            return True
        command = self.script[self.at]
        self.at += 1
        self.ran = self.ran or command == "e"
        if command in "{e" or self.arguments(command):
            return command == "e" or command != "{"
        self.skip(" \t")
        return self.at < self.end and self.script[self.at] not in ";\n}#"

    def arguments(self, command: str) -> bool:
        """Past ``command``'s arguments; True where it may run one (an ``s///e``) or is not known."""
        if command in "}=dDgGhHnNpPxzFlLqQ":
            self.skip(" \t0123456789")
        elif command in "#aicrRwW":
            self.rest_of_line()
        elif command in ":btTv":  # GNU sed ends a label at white space or `;`
            self.skip(" \t")
            while self.at < self.end and self.script[self.at] not in "; \t\n":
                self.at += 1
        elif command in "sy":
            if self.at >= self.end or self.script[self.at] in "\n\\":
                return True
            delimiter = self.script[self.at]
            self.at += 1
            if not (self.delimited(delimiter) and self.delimited(delimiter)):
                return True
            flags = self.at
            self.skip("gpiImMe0123456789" if command == "s" else "")
            if "e" in self.script[flags:self.at]:
                self.ran = True
                return True
            if command == "s" and self.at < self.end and self.script[self.at] == "w":
                self.rest_of_line()
        else:
            return True
        return False


def check_filter(words: list[str], index: int, strict: bool = True) -> None:
    """:class:`Unread` where ``words[index]`` is awk or sed whose program runs commands (:func:`filter_program`;
    ``words`` as a POSIX shell splits them, no word's own words after it)."""
    name = os.path.basename(words[index]).lower()
    if name in FILTERS:
        reason = filter_program(name, words, index + 1, strict)[0]
        if reason:
            raise Unread(reason)


def check_filters(words: list[str]) -> None:
    """:func:`check_filter` of each word of a PowerShell command split as a POSIX shell splits it (its quotes
    keep a program whole as a POSIX shell's do; a sed script not parsed is taken not to run one)."""
    for index in range(len(words)):
        check_filter(words, index, strict=False)


def filter_option(tool: str, word: str) -> tuple[str, str, bool]:
    """The option ``word`` of awk or sed (``tool``) as ``(short option, value, whether the value is the next
    word)``: ``("f", "x.awk", False)`` for ``-fx.awk`` or ``--file=x.awk``; ``("", "", False)`` for a flag."""
    if word.startswith("--"):
        key, equals, value = word.partition("=")
        longer = [option for option in _FILTER_LONG[tool] if option.startswith(key)]
        flag = _FILTER_LONG[tool].get(key if key in longer else longer[0] if len(longer) == 1 else "", "")
        return flag, value, bool(flag) and not equals
    required, joined = _FILTER_SHORT[tool]
    at = next((n for n, letter in enumerate(word[1:], 1) if letter in required + joined), None)
    if at is None:
        return "", "", False
    return word[at], word[at + 1:], not word[at + 1:] and word[at] in required


def filter_program(name: str, words: list[str], start: int, strict: bool = True,
                    nested: bool = False) -> tuple[str, list[str]]:
    """For awk or sed before ``words[start]``: why its program may run a command ("" if it may not), and the
    program files it names (``-f x.awk``). Options are read as the tool reads them: awk's up to its program (the
    first word that is no option), sed's to the command's end (GNU sed takes them after its script too); the
    words :func:`with_nested` adds after a word holding spaces are skipped where ``nested``. Not ``strict`` (words
    split on white space too, which cut a program apart): a sed script not parsed is taken not to run one."""
    tool = "awk" if name in AWKS else "sed"
    programs: list[str] = []
    files: list[str] = []
    positional: list[str] = []
    index, options = start, True

    def take() -> str:  # the next word, past the words with_nested added after it (a word holding spaces)
        nonlocal index
        word = words[index] if index < len(words) else ""
        index += 1
        if nested and any(space in word for space in " \t\n"):
            index += len(nested_words(word))
        return word

    while index < len(words) and index < start + 256:
        word = take()
        if not word or set(word) <= SEPARATOR:
            break
        flag, value = "", ""
        if word == "--" and options:
            options = False
        elif options and word[:1] == "-" and len(word) > 1:
            flag, value, needs = filter_option(tool, word)
            value = take() if needs else value
        else:
            positional.append(word)
            if tool == "awk":
                break
        if flag == "e":
            programs.append(value)
        elif flag in ("f", "E") or (flag == "W" and value.startswith("e")):  # mawk's `-W exec file`
            if flag == "W" or from_stdin(value) or "$(" in value or "`" in value:
                return f"{name} reads its program from {value!r}, which CodeAct does not read", files
            files.append(value)
        elif tool == "awk" and flag in ("i", "l"):
            return f"{name} -{flag} loads a file CodeAct does not read", files
    if not programs and not files and positional:
        programs.append(positional[0])
    script = "\n".join(programs)
    if programs and (_awk_runs(script) if tool == "awk" else _sed_runs(script, strict)):
        return f"{name}'s program runs commands CodeAct does not read", files
    return "", files
