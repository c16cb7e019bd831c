"""A command's words as the shell splits them: POSIX shells (:func:`shell_words`), PowerShell and cmd
(:func:`windows_words`), with the variables, substitutions and expansions the reader follows."""
from __future__ import annotations

import os
import re
import shlex

from .bounds import MAX_COMMAND_CHARS, Budget, Unread
from .matching import compiled_glob
from .names import PLUGIN_VARS, PROJECT_VARS, SEPARATOR, SETS_NAMES, UNFOLLOWED_VARIABLES

# Command substitutions that name the repository's top or the cwd (`"$(git rev-parse --show-toplevel)/x.sh"`,
# `$(pwd)/x.sh`), read as the variables that name them; nothing nested inside.
_TOP_SUBST = re.compile(r"\$\(\s*git\s+rev-parse\s+--show-toplevel\b[^()`]*\)"
                        r"|`\s*git\s+rev-parse\s+--show-toplevel\b[^()`]*`")
# `$(dirname "${BASH_SOURCE[0]}")`: a hook's command is bash's `-c` text, no script: BASH_SOURCE is empty (and
# `$0` a shell's name), whose folder is `.`, the folder the command runs in
_SOURCE_DIR = re.compile(r"""\$\(\s*dirname\s+(["']?)\$\{?BASH_SOURCE(?:\[0\])?\}?\1\s*\)""")
_PWD_SUBST = re.compile(r"\$\(\s*(?:pwd|[Gg]et-[Ll]ocation)\b[^()`]*\)|`\s*pwd\b[^()`]*`")
# A variable as a POSIX shell, PowerShell or cmd writes it: `${D}` or `${D:-x}`, `$env:D`, `$D`, `%D%`
# (`${D:?msg}`: D or an error; `${D,,}`, `${D^^}`, `${D,}`, `${D^}`: D's case changed; `${D[@]}`, `${D[*]}`,
# `${D[0]}`: an array's items, a scalar's value)
VARIABLE = re.compile(r"\$\{(\w+)(?::?[-=?][^{}]*|,,?|\^\^?|\[[@*0]\])?\}|\$env:(\w+)|\$(\w+)|%(\w+)%")
_LENGTH = re.compile(r"\$\{#\w+(?:\[(?:[@*]|[0-9]+)\])?\}")  # `${#D}`, `${#D[@]}`: a number (SPECIAL reads it)
_TRIMMED = re.compile(r"\$\{(\w+)(%%|%|##|#)([^{}]*)\}")  # `${D%/}`: a value's end or start removed
# `D=impl`, a shell variable's assignment; `D+=impl` appends, `D[0]=x` an array's item (neither is known)
ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)(?:\[[^]]*\])?(\+?)=(.*)", re.DOTALL)
_LOCALE = re.compile(r'(?<![\w$\\])\$"')  # bash's $"...", at a word's start
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")  # bash's $'...'
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)", re.DOTALL)
_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
              "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_BRACES = re.compile(r"(?<!\$)\{([^{}]*)\}")  # a brace expansion's group: `{a,b}`, `{1..3}`
MAX_BRACES = 64  # words one brace expansion is read as; a larger one is read as a pattern (`**`)
# `${VAR:-default}` (and `-`, `:=`, `=`): a variable not known here read as its default
_TILDE_DIRS = re.compile(r"~([+-][0-9]*|[0-9]+)(?=$|[/\\])")  # bash's `~+`, `~-`, `~N`: the folder stack (not `~`)
_DEFAULTED = re.compile(r"\$\{(\w+):?[-=]([^{}]*)\}")
_TRIM = "\"'`;(){}&|,"  # around a PowerShell or cmd word


def check_expansions(text: str) -> None:
    """:class:`Unread` where the shell command ``text`` holds a ``${...}`` this module does not apply (``${D/x/y}``,
    ``${D:0:4}``, ``${!D}``, nested ones): what the word names is not known, so its file fails closed."""
    at = text.find("${")
    while at >= 0:
        if not (VARIABLE.match(text, at) or _TRIMMED.match(text, at) or _LENGTH.match(text, at)):
            end = text.find("}", at)
            form = text[at:end + 1 if 0 <= end < at + 40 else at + 40]
            raise Unread(f"a parameter expansion CodeAct does not read: {form}")
        at = text.find("${", at + 2)


def cased(match: re.Match[str], value: str) -> str:
    """``value``, a variable's (:data:`VARIABLE`'s ``match``), as the expansion gives it: its case changed by
    ``${D,,}``, ``${D^^}``, ``${D,}``, ``${D^}``; as it is otherwise."""
    operation = match[0][-3:-1] if match[0].startswith("${") else ""
    if operation == ",,":
        return value.lower()
    if operation == "^^":
        return value.upper()
    if operation[-1:] == ",":
        return value[:1].lower() + value[1:]
    if operation[-1:] == "^":
        return value[:1].upper() + value[1:]
    return value


def _trimmed(match: re.Match[str], values: dict[str, str]) -> str:
    """bash's ``${D%pattern}``, ``${D%%pattern}``, ``${D#pattern}``, ``${D##pattern}`` of a value in ``values``
    (the shortest or longest end or start the pattern matches removed); as written where ``D`` is not there."""
    value = values.get(match[1])
    if value is None:
        return match[0]
    operation, pattern = match[2], match[3]
    regex = compiled_glob(pattern)
    if regex is None:
        raise Unread(f"a pattern of {match[0]} spans too many characters to read")
    cuts = range(len(value) + 1)
    if operation[0] == "%":
        ends = [n for n in cuts if regex.match(value[n:])]
        return value[:max(ends) if operation == "%" else min(ends)] if ends else value
    starts = [n for n in cuts if regex.match(value[:n])]
    return value[min(starts) if operation == "#" else max(starts):] if starts else value


def _from_substitution(value: str, after: list[str]) -> bool:
    """Whether an assignment's ``value`` (the word after it: ``after``) is a command substitution's output, which
    the shell's words do not hold: an unquoted ``$(...)`` (shlex splits it as ``$`` then ``(``; one word where a
    word's text is right before it, ``x=v$(...)``), backticks."""
    return "`" in value or "$(" in value or (value.endswith("$") and after[:1] != [] and after[0].startswith("("))


_READS = re.compile(r"\$\{\w+(?!\w)(?!:?=)|\$\w+")  # a variable read, not set: `$T`, `${T}`, `${T%x}`, `${T:-x}`
_NAME = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_LOOP_HEAD = re.compile(r"\bfor\s+[A-Za-z_]\w*")
_SHORT_OPTIONS = re.compile(r"-[A-Za-z]+")
# Commands whose assignment words are no plain `NAME=literal` (`declare -i T=1+1` is 2, `declare -u`: upper case;
# `let T=1+1`; `env T=x cmd` sets none of the shell's)
_VALUED_ASSIGNERS = frozenset(("declare", "typeset", "local", "let", "env", "eval"))
# Words after which an assignment runs in a subshell, in a compound command, or only maybe: `a && T=x`, `T=x | c`,
# `if ...; then T=x`, `(T=x)`, `f() { T=x; }`, `for ...; do T=x`
_COMPOUND = frozenset(("if", "then", "else", "elif", "fi", "while", "until", "do", "done", "case", "esac", "for",
                       "select", "function", "{", "}", "[[", "]]", "!", "coproc", "time"))


# Variables bash sets itself (bash(1), "Shell Variables"): `read` with no name sets REPLY, `mapfile` MAPFILE,
# `getopts` OPTARG and OPTIND, `[[ =~ ]]` BASH_REMATCH, every command `_` and PIPESTATUS, `cd` PWD and OLDPWD: a
# `NAME=literal` of one is never its value later
SHELL_SET = re.compile(r"_|REPLY|MAPFILE|OPTARG|OPTIND|OPTERR|PIPESTATUS|RANDOM|SRANDOM|SECONDS|LINENO|PWD|OLDPWD|"
                        r"IFS|COPROC|DIRSTACK|EPOCHREALTIME|EPOCHSECONDS|FUNCNAME|GROUPS|HISTCMD|HOSTNAME|HOSTTYPE|"
                        r"MACHTYPE|OSTYPE|PPID|UID|EUID|SHLVL|SHELLOPTS|BASHOPTS|BASHPID|COLUMNS|LINES|"
                        r"BASH|BASH_\w+|COMP_\w+|READLINE_\w+")


def _mentions(text: str, loops: bool = True) -> list[str]:
    """The variables the shell text ``text`` may set: each name in it that is not a variable's reading (``$T``,
    ``${T}``, ``${T%x}``, ``${T:-x}``; ``${T:=x}`` sets ``T``), and the ends of a word of short options
    (``printf -vT``, ``read -aT``). ``loops``: a loop's name (``for T``) too."""
    text = _READS.sub(" ", text)
    if not loops:
        text = _LOOP_HEAD.sub(" ", text)
    if _SHORT_OPTIONS.fullmatch(text):  # `-c`: no name; `-vT`: maybe T
        return [text[at:] for at in range(2, len(text)) if text[at] != "-"]
    return _NAME.findall(text.partition("=")[2] if text.startswith("--") else text)


def set_names(words: list[str]) -> set[str]:
    """The variables the shell ``words`` may set (:func:`_mentions`), but for the names of their loops (``for
    T``), whose values a loop over a literal list or a glob names, and a loop over a substitution makes own."""
    return {name for index, word in enumerate(words) if not (index and words[index - 1] == "for")
            for name in _mentions(word, loops=False)}


def _splits(word: str) -> bool:
    """Whether :func:`with_nested` reads ``word``'s own words after it: it holds white space, or it is code that
    starts a process (:func:`_code_literals`)."""
    return any(space in word for space in " \t\n") or bool(_STARTS_PROCESS.search(word))


def known_names(words: list[str], nested: bool) -> tuple[set[str], set[str]]:
    """The variables a shell command's ``words`` set to a value known here, and those it sets otherwise. A name
    is known only where the whole command sets it once, by a plain ``NAME=literal`` at the top level: not after
    ``&&``, ``||``, in a pipe, a subshell, a compound command or a function (where it may not run, or not in
    this shell); not a prefix of a command (``T=x cmd``: that command's only); not ``+=``, an array (``A=(x)``,
    ``A[0]=x``) or a substitution's output; not an argument (``declare -i``, ``let``, ``env``, ``eval``); and
    no other word names it (``read T``, ``mapfile T``, ``for T``, ``printf -v T``, ``unset T``, ``${T:=x}``,
    ``((T++))``, ``let T++``): each of those makes it set otherwise, read as a pattern (``**``), not its value.
    ``nested``: a word holding white space is followed by its own words (:func:`with_nested`), read with it."""
    counts: dict[str, int] = {}
    plain: set[str] = set()
    top, chained, argument = True, False, False  # top level; after `&&`/`||` this command; not at a command's place
    outer: list[str] = []
    inside = 0
    for word in words:
        inside -= 1
        if inside < 0:  # not a quoted word's own words: its text is read as itself
            outer.append(word)
            if nested and _splits(word):
                inside = len(nested_words(word))
    for at, word in enumerate(outer):
        if word and set(word) <= SEPARATOR:
            top = top and word == ";"
            chained = chained or word in ("&&", "||")
            chained = chained and word != ";"
            argument = False
            continue
        assignment = ASSIGNMENT.fullmatch(word)
        if assignment is None or argument:
            for name in (assignment[1],) if assignment else ():
                counts[name] = counts.get(name, 0) + 1
            for name in _mentions(assignment[3] if assignment else word):
                counts[name] = counts.get(name, 0) + 1
            top = top and (argument or word not in _COMPOUND)
            argument = argument or word not in ("export", "readonly")  # `export T=x` sets T as `T=x` does
            continue
        name, value = assignment[1], assignment[3]
        counts[name] = counts.get(name, 0) + 1
        for other in _mentions(value):
            counts[other] = counts.get(other, 0) + 1
        after = outer[at + 1:at + 2]
        following = next((w for w in outer[at + 1:] if not ASSIGNMENT.fullmatch(w)), ";")
        if top and not chained and "[" not in word.partition("=")[0] and not assignment[2] and \
                not _from_substitution(value, after) and not (after and after[0].startswith("(")) and \
                following in (";", "&&", "||"):
            plain.add(name)
    known = {name for name in plain if counts.get(name) == 1 and not SHELL_SET.fullmatch(name)}
    return known, set(counts) - known


def assigned(words: list[str], plugin: bool, nested: bool = False) -> list[str]:
    """A shell command's ``words`` with the variables it assigns itself (``D=impl; sh "$D/run.sh"``, ``export
    D=impl``), those :func:`known_names` knows, read in the words after the assignment (a quoted word also as
    written: ``bash -c '...$D'`` reads the inner shell's ``D``), a ``${D:-x}`` of a variable the command sets
    otherwise read as ``${D}`` (any text), and a value holding white space read as its words too
    (``x='cd impl'; $x``); :class:`Unread` where they grow the command past :data:`MAX_COMMAND_CHARS` (not those
    hookruns sets itself). ``nested``: a quoted word's words follow it (:func:`with_nested`), no assignments."""
    if not any("=" in word or "$" in word for word in words):
        return words
    own = (*(PLUGIN_VARS if plugin else PROJECT_VARS), "PWD")
    known, changed = known_names(words, nested)
    changed.difference_update(own)
    values: dict[str, str] = {}
    size = sum(map(len, words))
    out: list[str] = []

    def value_of(match: re.Match[str]) -> str:
        nonlocal size
        name = next(group for group in match.groups() if group)
        found = values.get(name)
        if found is None:
            return match[0]
        if not found and match[0].startswith(("${" + name + ":-", "${" + name + ":=")):  # `T=; sh ${T:-x}.sh`: x
            found = match[0][len(name) + 4:-1]
        found = cased(match, found)
        size += len(found)
        if size > MAX_COMMAND_CHARS:
            raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB once its variables are read")
        return found

    def trimmed(match: re.Match[str]) -> str:
        nonlocal size
        found = _trimmed(match, values)
        size += len(found)
        if size > MAX_COMMAND_CHARS:
            raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB once its variables are read")
        return found

    inside = 0  # words left of a quoted word's words (`x='cd impl'` then `x=cd`, `impl`): no assignments
    for at, word in enumerate(words):
        given = original = word
        inside -= 1
        outer = inside < 0
        if nested and outer and _splits(word):
            inside = len(nested_words(word))
        if changed and "${" in word:  # `: ${T:=x}; sh ${T:-y}.sh`, T set otherwise too: T, not y
            word = _DEFAULTED.sub(lambda match: f"${{{match[1]}}}" if match[1] in changed else match[0], word)
            given = word
        if values and "$" in word:
            word = VARIABLE.sub(value_of, _TRIMMED.sub(trimmed, word))
        assignment = ASSIGNMENT.fullmatch(word)
        if assignment and outer and assignment[1] in known:  # its one plain `NAME=literal` (:func:`known_names`)
            values[assignment[1]] = assignment[3]
        out.append(word)
        if word != given and (not outer or any(space in given for space in " \t\n")):
            out.append(given)  # `T=x; bash -c 'sh $T.sh'`: the inner shell's T unless exported: a pattern too
        if word != given and any(space in word for space in " \t\n"):  # `x='cd impl'; $x`, `eval "$x"`: its
            out += shell_words(word, 2)  # words, as a quoted word's are read (`with_nested`)
        out += _setting(original, given)
    return out


def _setting(original: str, given: str) -> list[str]:
    """``[original]`` where :func:`assigned` read a word's ``${x:=v}`` (which sets x) as ``${x}``: the word as
    written follows, for :mod:`.evaluated` to read what it sets; ``[]`` otherwise."""
    return [original] if original != given and re.search(r"\$\{\w+:?=", original) else []


def shell_words(text: str, depth: int = 0, *, budget: Budget | None = None) -> list[str]:
    """The words of a POSIX shell command (quotes removed; ``;``, ``&&``, ``|``, redirections apart); a quoted word
    holding spaces (``sh -c '...'``) is split once more. Unbalanced quotes: split on white space, quotes
    trimmed. Each word is counted against ``budget``."""

    budget = budget or Budget()
    words: list[str] = []
    try:
        text = _EXTGLOB.sub("*", _command_lines(_joined_lines(text)))  # `impl/\<newline>run.sh`; `@(run)`: `*`
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""  # bash starts a comment only at a word's start (`${D#x}` is none): read on
        for word in lexer:
            budget.spend()
            words.append(word)
            if "{" in word and ("," in word or ".." in word):  # `impl/{run,none}.sh`: bash runs impl/run.sh
                more = _braces(word)
                budget.spend(len(more))
                words += more
    except ValueError:
        words = [word.strip("\"'") for word in text.split()]
        budget.spend(len(words))
    return with_nested(words, depth, budget)


def _braces(word: str) -> list[str]:
    """The words bash's brace expansion makes of ``word`` (its groups outside ``${}``, nested ones too; the word
    as written is kept by the caller): each ``{a,b}`` read as its parts, a ``{1..9}`` sequence, or more than
    :data:`MAX_BRACES` words, read as the pattern ``*``."""
    done: list[str] = []
    pending = [word]
    while pending:
        current = pending.pop()
        group = next((g for g in _BRACES.finditer(current) if "," in g[1] or ".." in g[1]), None)
        if group is None:
            done.append(current)
            continue
        head, tail = current[:group.start()], current[group.end():]
        parts = group[1].split(",") if "," in group[1] else ["*"]
        pending += [head + part + tail for part in parts]
        if len(done) + len(pending) > MAX_BRACES:
            return [_BRACES.sub("**", word)]
    return done if done != [word] else []


_EXTGLOB = re.compile(r"[@+!?*]\([^()\s]*\)")  # bash's extglob groups: `@(a|b)`, `+(x)`, read as `*`


def _joined_lines(text: str) -> str:
    """``text`` with bash's line continuations removed: a backslash before a newline, outside single quotes and
    outside comments (bash ends a comment at the newline whatever precedes it: ``# x \\`` hides no next line);
    an unquoted ``#`` at a word's start begins one (as :class:`_LineReader` reads it)."""
    if "\\\n" not in text:
        return text
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "#" and (not out or out[-1][-1:] in " \t\n;&|()"):  # in `"$(`, too: kept as written to
            end = text.find("\n", index)  # its line's end (a string's `#` unjoined reads the same)
            end = len(text) if end < 0 else end
            out.append(text[index:end])
            index = end
            continue
        elif char == "\\" and text[index + 1:index + 2] == "\n":
            index += 2
            continue
        elif char == "\\":
            out.append(text[index:index + 2])
            index += 2
            continue
        elif char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        out.append(char)
        index += 1
    return "".join(out)


# A place where a command starts: the text's start, after an operator or a keyword that a command follows
_COMMAND_PLACE = re.compile(r"(?:\A|[;&|(\n]|(?<![\w$-])(?:if|then|else|elif|while|until|do|!|\{|time))[ \t]*\Z")
# `[[`'s `=~` and its regex, unquoted, as bash reads it: to white space outside parentheses; `(`, `)`, `|` in it
# are the regex's, not the shell's; no quote, escape, expansion (a `$` only as an anchor) or operator in it
_TEST_REGEX = re.compile(r"(=~[ \t]+)((?:[^\s'\"\\`$;&<>()|]|\$(?=[\s)|]|\Z)|[|]|\((?:[^\s'\"\\`$;&<>()]|"
                         r"\$(?=[)|]))*\))+)(?=[ \t]+\]\])")
_WORD_BREAKS = " \t\n;&|()<>"  # what ends a shell word, unquoted (an empty string: the text's end)
_QUOTE_AFTER_NAME = re.compile(r"\$([A-Za-z_]\w*)(?=['\"\\\\])")  # a variable's name ends at a quote
_HERE_OPERATOR = re.compile(r"<<(-?)[ \t]*((?:[^\s;&|()<>'\"\\]|'[^']*'|\"[^\"]*\"|\\.)+)")


def _command_lines(text: str) -> str:
    """``text`` as bash reads its lines, for :mod:`shlex` (which reads a newline as white space and a ``#`` or
    ``'`` of a comment as text): an unquoted newline (outside quotes, ``$'...'``, a here-document's body) that ends
    a command written as `` ; `` (after an operator that wants more, ``a |``, ``a &&``, ``(``: white space), an
    unquoted ``#`` at a word's start (not inside ``${...}``) dropped to its line's end (a comment), each
    here-document's body written as one quoted word right after its delimiter (``cat <<EOF`` / ``x`` / ``EOF``:
    ``cat << EOF 'x\n'``), which :func:`with_nested` reads as its own words, and ``$X'T'`` as ``${X}'T'`` (bash's
    name ends at the quote; shlex would join ``$XT``)."""
    if "\n" not in text and "#" not in text and "$(" not in text and "=~" not in text and \
            not _QUOTE_AFTER_NAME.search(text):
        return text
    return _LineReader(text).read()


class _LineReader:
    """:func:`_command_lines`' one pass over a command's text."""

    def __init__(self, text: str) -> None:
        self.text, self.index = text, 0
        self.out: list[str] = []
        self.pending: list[tuple[int, str, bool]] = []  # here-documents whose body follows: (slot, end, tabs)
        self.contexts: list[str] = [""]  # "" the top; `$(`, `(`, "`": a command; '"' a double-quoted string; `${`;
        # `((`, `$[`: arithmetic (`$(( 1 << 2 ))` holds no here-document), with its brackets open (`depths`)
        self.depths: list[int] = []
        self.tests = 0  # `[[` open (not closed by `]]`): a regex after `=~` is one word
        # each unquoted `$(` open, by its context's place: where its text starts in `out`, and whether a word's
        # text is right before it (`tools/$(`; not `x=$(`, which :func:`_from_substitution` reads)
        self.unquoted: dict[int, tuple[int, bool]] = {}

    def read(self) -> str:
        text = self.text
        while self.index < len(text):
            char = text[self.index]
            name = _QUOTE_AFTER_NAME.match(text, self.index) if char == "$" else None
            if name:  # `$X'T'`: bash reads `$X` then `T`, shlex `$XT`: `${X}'T'`
                self.take("${" + name[1] + "}", name.end() - self.index)
            elif char == "\\":
                self.take(text[self.index:self.index + 2], 2)
            elif self.contexts[-1] == '"':
                self.quoted(char)
            else:
                self.command(char)
        return "".join(self.out)

    def take(self, written: str, size: int, context: str = "") -> None:
        self.out.append(written)
        self.index += size
        if context:
            self.contexts.append(context)

    def quoted(self, char: str) -> None:
        """A character inside double quotes: `$(` and backticks open a command, `"` closes."""
        if char == '"':
            self.contexts.pop()
        elif self.text.startswith("$(", self.index) and not self.text.startswith("$((", self.index):
            self.take("$(", 2, "$(")
            return
        elif char == "`":
            self.contexts.append("`")
        self.take(char, 1)

    def command(self, char: str) -> None:
        """A character of a command (the top, ``$(...)``, backticks, ``${...}``)."""
        text, index, context = self.text, self.index, self.contexts[-1]
        if context in ("((", "$[") and char in "()[]":  # arithmetic's brackets, to its closing ones
            self.depths[-1] += 1 if char in "([" else -1
            if self.depths[-1] <= 0:
                self.contexts.pop()
                self.depths.pop()
            self.take(char, 1)
            return
        if text.startswith(("((", "$((", "$["), index):  # `((` as nested subshells too: its brackets balance
            self.depths.append(1 if text[index + 1] == "[" else 2)
            self.take(text[index:index + 3 - (char == "(")], 3 - (char == "("), "$[" if text[index + 1] == "[" else "((")
            return
        if char in "[]=" and self.test(char):
            return
        if char == "'" or text.startswith("$'", index):  # to its closing quote (`$'\''`: an escaped one)
            end = index + (char == "$") + 1
            while end < len(text) and text[end] != "'":
                end += 1 + (char == "$" and text[end] == "\\")
            self.take(text[index:end + 1], end + 1 - index)
            return
        if (char == "$" or char == ")" and context == "$(") and self.substitution(char):
            return
        if text.startswith("${", index):  # `${x/ #y/z}`: no comment inside
            self.take("${", 2, "${")
            return
        if char in "\"`" and not (char == "`" and context == "`") or char == "(" and context == "$(":
            self.take(char, 1, "(" if char == "(" else char)
            return
        if char == "`" or char == ")" and context in ("$(", "(") or char == "}" and context == "${":
            self.contexts.pop()
        elif char == "#" and context not in ("${", "((", "$[") and "".join(self.out[-2:])[-1:] in " \t\n;&|()":
            end = text.find("\n", index)  # a comment, to the line's end (not `a#b`)
            self.index = len(text) if end < 0 else end
            return
        elif text.startswith("<<", index) and not text.startswith("<<<", index) and context not in ("((", "$[") and \
                (operator := _HERE_OPERATOR.match(text, index)):
            delimiter = re.sub(r"""\\(.)|['"]""", r"\1", operator[2])
            self.take(operator[0], len(operator[0]))
            self.pending.append((len(self.out), delimiter, bool(operator[1])))
            self.out.append("")  # the body's word, once read
            return
        elif char == "\n":
            self.newline()
            return
        self.take(char, 1)

    def test(self, char: str) -> bool:
        """Follows ``[[`` (at a command's place) to its ``]]``; inside, an unquoted ``=~``'s regex is taken as one
        quoted word (``=~ ^(a|b)$``: no pipe), True."""
        text, index, before = self.text, self.index, "".join(self.out[-1:])[-1:]
        if char == "[" and text.startswith("[[", index) and text[index + 2:index + 3] in ("", " ", "\t", "\n") and \
                _COMMAND_PLACE.search("".join(self.out[-8:])):
            self.tests += 1
        elif char == "]" and self.tests and text.startswith("]]", index) and before in " \t":
            self.tests -= 1
        elif char == "=" and self.tests and before in " \t" and (regex := _TEST_REGEX.match(text, index)):
            self.take(regex[1] + shlex.quote(regex[2]), len(regex[0]))
            return True
        return False

    def substitution(self, char: str) -> bool:
        """Opens a ``$(`` (True), or closes one that, unquoted, is part of a word (``tools/$(x).sh``) as ``"$(x)"``
        (True): one word (shlex would split it at the parentheses: ``tools/$``), naming what it prints
        (:func:`_unknown`)."""
        if char == "$":
            if not self.text.startswith("$(", self.index):
                return False
            if '"' not in self.contexts:  # unquoted: where it is part of a word, that word is quoted whole
                before = "".join(self.out[-2:])[-1:]
                self.unquoted[len(self.contexts)] = (len(self.out), before not in _WORD_BREAKS + "=")
            self.take("$(", 2, "$(")
            return True
        opened = self.unquoted.pop(len(self.contexts) - 1, None)
        if opened and (opened[1] or self.text[self.index + 1:self.index + 2] not in _WORD_BREAKS):
            self.contexts.pop()
            self.out[opened[0]] = '"$('
            self.take(')"', 1)
            return True
        return False

    def newline(self) -> None:
        """An unquoted newline: `` ; `` (`a |`⏎`b`, `a &&`⏎`b`, `(`⏎: white space; a keyword, `then ;`, reads
        alike), then the bodies of the line's here-documents, one after another."""
        before = "".join(self.out[-8:]).rstrip(" \t")
        self.take(" " if before[-1:] in "|&(;" else " ; ", 1)

        text = self.text
        for slot, delimiter, tabs in self.pending:
            lines: list[str] = []
            while self.index < len(text):
                end = text.find("\n", self.index)
                line = text[self.index:len(text) if end < 0 else end]
                self.index = len(text) if end < 0 else end + 1
                line = line.lstrip("\t") if tabs else line  # `<<-`: leading tabs stripped
                if line == delimiter:
                    break
                lines.append(line + "\n")
            self.out[slot] = " " + shlex.quote("".join(lines) or "\n")  # a body's word ends in a newline
        self.pending = []


def _trimmed_word(word: str) -> str:
    """``word`` with :data:`_TRIM` taken from its ends, but the ``}`` that closes a ``${...}`` kept (``"${X}"`` is
    ``${X}``, not ``${X``, which no variable is)."""
    trimmed = word.strip(_TRIM)
    if "${" in trimmed and trimmed.rfind("}") < trimmed.rfind("${") and "}" in word[word.find(trimmed) + len(trimmed):]:
        trimmed += "}"
    return trimmed


def windows_words(text: str, depth: int = 0, *, budget: Budget | None = None) -> list[str]:
    """The words of a PowerShell or cmd command: split on white space, quotes and ``;(){}&|,`` trimmed from their
    ends, ``\\`` read as ``/``. Counted against ``budget``."""
    budget = budget or Budget()
    raw = text.split()
    words = [_trimmed_word(word).replace("\\", "/") for word in raw]
    more = [_UNESCAPED.sub(r"\1", word) for word in words if "`" in word or "^" in word]  # `r`un.ps1`, r^un.bat
    more += [_FORMAT_ITEM.sub("**", word) for word in words if _FORMAT_ITEM.search(word)]  # `'x/{0}.ps1' -f 'run'`
    more += _joined_paths(raw)
    words += more
    budget.spend(len(words))
    return with_nested([word for word in words if word], depth, budget)


_UNESCAPED = re.compile(r"[`^](.)")  # PowerShell's backtick, cmd's caret: the character after it as itself
_FORMAT_ITEM = re.compile(r"\{\d+(?:,[^{}]*)?(?::[^{}]*)?\}")  # `-f`'s format item: any text (a pattern)
_JOIN_OPTIONS = ("-path", "-childpath", "-additionalchildpath", "-resolve")


def _joined_paths(raw: list[str]) -> list[str]:
    """The paths PowerShell's ``Join-Path`` makes of its arguments (positional, ``-Path``, ``-ChildPath``,
    ``-AdditionalChildPath``) among the white-space words ``raw``, as one ``/``-joined word each."""
    found: list[str] = []
    for index, word in enumerate(raw):
        if word.strip(_TRIM).lower() != "join-path":
            continue
        parts: list[str] = []
        for part in raw[index + 1:index + 17]:
            end = part.rstrip().endswith((")", ";", "|")) or part in ("|", ";")
            clean = part.strip(_TRIM).replace("\\", "/")
            if clean and clean.lower() not in _JOIN_OPTIONS:
                parts += [name.strip(_TRIM) for name in clean.split(",") if name.strip(_TRIM)]
            if end:
                break
        if parts:
            found.append("/".join(parts))
    return found


def with_nested(words: list[str], depth: int, budget: Budget) -> list[str]:
    if depth >= 2:
        return words
    out: list[str] = []
    for word in words:
        out.append(word)
        if _splits(word):
            out += nested_words(word, depth, budget)
    return out


def nested_words(word: str, depth: int = 0, budget: Budget | None = None) -> list[str]:
    """The words :func:`with_nested` adds after ``word`` (which holds white space, or is code that starts a process):
    its shell and PowerShell words, an option's value's too (npx's ``--call="cd impl && bash run.sh"``, nopt's
    ``--key=value``), and the string literals of code that starts a process (:func:`_code_literals`)."""
    out = shell_words(word, depth + 1, budget=budget) + windows_words(word, depth + 1, budget=budget)
    key, equals, value = word.partition("=")
    if equals and key[:1] == "-" and not any(space in key for space in " \t\n"):
        out += shell_words(value, depth + 1, budget=budget) + windows_words(value, depth + 1, budget=budget)
    for inner in substitutions(word) if "$(" in word or "`" in word else ():  # `"it's $(x | sh)"`: code,
        out += shell_words(inner, depth + 1, budget=budget)  # whatever quote the word's text opens
    literals = _code_literals(word)
    if literals:
        (budget or Budget()).spend(len(literals))
        for literal in literals:
            out.append(literal)
            if any(space in literal for space in " \t\n"):  # `os.system("bash " + "tools/check")`
                out += shell_words(literal, 2, budget=budget)
    return out


def substitutions(text: str) -> list[str]:
    """The outer command substitutions of ``text`` (``$(...)``, its parentheses balanced; backticks), each one's
    text (those nested inside are read with it)."""
    found = [match[1] for match in re.finditer(r"`([^`]*)`", text)]
    at = text.find("$(")
    while at >= 0:
        depth, end = 0, at + 1
        while end < len(text):
            depth += 1 if text[end] == "(" else -1 if text[end] == ")" else 0
            if depth == 0:
                break
            end += 1
        found.append(text[at + 2:end].strip("()") if text.startswith("$((", at) else text[at + 2:end])
        at = text.find("$(", end)
    return found


# Code that starts a process (python's, node's, deno's, bun's, perl's, ruby's -c/-e): `subprocess.run(['bash',
# 'tools/check'])`, `os.execvp`, `child_process.execFileSync('bash', [...])`: the script is one of its string
# literals, which its shell words (`[bash,`, `tools/check])`) do not name
_STARTS_PROCESS = re.compile(r"subprocess|child_process|\b(?:os|pty|posix|Open3|Process|Kernel|IO|Deno|Bun|execa|"
                             r"shelljs|zx|sh|plumbum|pexpect|sarge|invoke|fabric)\s*\.|\b(?:exec\w*|spawn\w*|fork\w*|"
                             r"system|popen\w*|Popen|call|check_call|check_output|getoutput|getstatusoutput|"
                             r"run|qx|startfile|create_subprocess_\w+|Command)\s*[(`]|`|\$`|\bqx\W|%x")
_LITERAL = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`((?:[^`\\]|\\.)*)`""", re.DOTALL)
_JOINED = re.compile(r"""(['"`])\s*\+?\s*\1""")  # `'tools/' + 'check'`, python's `'tools/' 'check'`
_PATH_JOIN = re.compile(r"\bjoin\s*\(([^()]*)\)")  # os.path.join('tools', 'check'), path.join(...)
_PLACEHOLDER = re.compile(r"\$?\{[^{}]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrifxa]")  # f'{d}/x', `${d}/x`, '%s/x'
MAX_LITERALS = 256


def _code_literals(code: str) -> list[str]:
    """The string literals of ``code`` where it starts a process (:data:`_STARTS_PROCESS`), each as a word, its
    escapes decoded: each literal, those ``+`` or adjacency joins, ``join(...)``'s literals joined by ``/``, and a
    literal with a placeholder (``f'{d}/x'``, ``'%s/x'``, `` `${d}/x` ``) as the pattern its other parts make
    (``**/x``); ``[]`` for other code. :class:`Unread` past :data:`MAX_LITERALS`."""
    if not _STARTS_PROCESS.search(code):
        return []
    found: list[str] = []
    for text in (code, _JOINED.sub("", code)):
        for match in _LITERAL.finditer(text):
            found.append(_decoded(next((group for group in match.groups() if group is not None), "")))
    for match in _PATH_JOIN.finditer(code):
        parts = [_decoded(next(group for group in part.groups() if group is not None))
                 for part in _LITERAL.finditer(match[1])]
        if parts:
            found.append("/".join(parts))
    found += [_PLACEHOLDER.sub("**", literal) for literal in found if _PLACEHOLDER.search(literal)]
    found = [literal for literal in dict.fromkeys(found) if literal.strip()]
    if len(found) > MAX_LITERALS:
        raise Unread(f"code that starts a process with more than {MAX_LITERALS} string literals")
    return found


def as_flag(word: str) -> str:
    """A word as an option is compared: lower case, one leading ``-`` for any run of dashes or ``/`` (PowerShell
    takes ``--EncodedCommand``, ``/EncodedCommand`` and en or em dashes alike)."""
    low = word.lower()
    stripped = low.lstrip("-/\u2013\u2014\u2015")
    return "-" + stripped if stripped != low else low


# An IFS of white space only (`IFS= read -r line`, `IFS=$'\n'`): it splits unquoted expansions at fewer places than
# bash's default (space, tab, newline), never inside a word the default keeps whole (`/` or a letter would)
_BLANK_IFS = re.compile(r"[ \t\n]*|\$'(?:\\[nt]| )*'")


def check_variable(name: str, value: str | None = None) -> None:
    """:class:`Unread` for a variable of a hook entry or command that makes what it runs read another file; an
    ``IFS`` of white space only (``value``, its word as written) aside."""
    if name == "IFS" and value is not None and _BLANK_IFS.fullmatch(value):
        return
    if UNFOLLOWED_VARIABLES.fullmatch(name):
        raise Unread(f"it sets {name}, which makes the command read a file CodeAct does not follow")


def substituted_text(text: str, env: object = None, plugin: bool = False) -> str:
    """``text`` as the shell reads it before splitting, as far as paths go: the entry's own ``env`` values in
    place of their variables (``$D``, ``${D}``, ``${D:-x}``, ``$env:D``, ``%D%``; not those hookruns sets itself),
    ``$'...'`` (ANSI-C quoting) decoded, and the command substitutions that name the repository's top (``$(git
    rev-parse --show-toplevel)``) or the cwd (``$(pwd)``, ``` `pwd` ```, ``$(Get-Location)``) written as the
    variables that name them (for a plugin's hooks the top is the session's folder: not known here).
    :class:`Unread` where the values make it longer than :data:`MAX_COMMAND_CHARS`."""
    if isinstance(env, dict) and env and ("$" in text or "%" in text):
        own = (*(PLUGIN_VARS if plugin else PROJECT_VARS), "PWD", "CD")
        sets = {name for piece in text.split() for name in _mentions(piece)}  # `read T`: its value, not env's
        values = {name: value for name, value in env.items()
                  if isinstance(name, str) and isinstance(value, str) and name not in own and name not in sets}
        size = [len(text)]

        def value_of(match: re.Match[str]) -> str:
            name = next(group for group in match.groups() if group)
            found = values.get(name)
            if found is None:
                return match[0]
            found = cased(match, found)
            size[0] += len(found)
            if size[0] > MAX_COMMAND_CHARS:
                raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB once its env is read")
            return found

        text = VARIABLE.sub(value_of, text)
    if "$'" in text:
        text = _ANSI_C.sub(lambda match: _ansi_c(match[1]), text)
    if '$"' in text:  # bash's locale quoting: `$"impl/run.sh"` reads as "impl/run.sh"
        text = _LOCALE.sub('"', text)
    if "$(" not in text and "`" not in text:
        return text
    text = _SOURCE_DIR.sub(".", _TOP_SUBST.sub("${COPILOT_PROJECT_DIR}", text))
    return _PWD_SUBST.sub("${PWD}", text)


def _ansi_c(body: str) -> str:
    """The text bash's ``$'...'`` stands for, as a shell word quoted for :mod:`shlex`: its escapes (a backslash
    and a letter, ``x`` and hex digits, octal digits, ``u``/``U`` and hex digits) decoded, one it does not know
    kept as written."""

    return shlex.quote(_decoded(body))


def _decoded(body: str) -> str:
    """``body`` with its C escapes decoded (a backslash and a letter, ``x`` and hex digits, octal digits,
    ``u``/``U`` and hex digits); one not known kept as written."""
    def decoded(match: re.Match[str]) -> str:
        escape = match[1]
        if escape[0] in "xuU":
            return chr(int(escape[1:], 16)) if len(escape) > 1 and int(escape[1:], 16) <= 0x10FFFF else match[0]
        if escape[0] in "01234567":
            return chr(int(escape, 8) & 0xFF)
        return _C_ESCAPES.get(escape, match[0])

    return _ESCAPE.sub(decoded, body) if "\\" in body else body


_PS_ENV = re.compile(r"(?i)\$\{env:(\w+)\}|\$env:(\w+)")


def expand_word(word: str, root: str, cwd: str, plugin: bool = False) -> str | None:
    """``word`` with the variables that name the project (``$CLAUDE_PROJECT_DIR``, ``$COPILOT_PROJECT_DIR``, or with
    ``plugin`` the plugin's ``$CLAUDE_PLUGIN_ROOT``, ``$COPILOT_PLUGIN_ROOT``), ``$PWD``, and their ``${}``,
    ``$env:`` and ``%%`` forms replaced, and ``${VAR:-default}`` read as ``$VAR`` where that is one of them, else as
    its default; None where another variable or ``~`` is left, since what it names is not known here."""
    if "${" in word and ("-" in word or "=" in word):
        known = (*(PLUGIN_VARS if plugin else PROJECT_VARS), "PWD")
        word = _DEFAULTED.sub(lambda m: f"${{{m[1]}}}" if m[1] in known else m[2], word)
    if "$" in word or "%" in word:
        if "env:" in word.lower():  # PowerShell's `${env:D}` and `$Env:D` are `$env:D`
            word = _PS_ENV.sub(lambda match: "$env:" + (match[1] or match[2]), word)
        for name, value in ((var, root) for var in (PLUGIN_VARS if plugin else PROJECT_VARS)):
            for form in (f"${{{name}}}", f"$env:{name}", f"%{name}%", f"${name}"):
                word = word.replace(form, value)
        for form in ("${PWD}", "$env:PWD", "$PWD", "%CD%"):
            word = word.replace(form, cwd)
        if "$" in word:
            return None
    tilde = _TILDE_DIRS.match(word)
    if tilde and tilde[1] in ("+", "0", "+0"):  # bash's `~+` (`~0`, `~+0`: `dirs +0`) is $PWD
        return cwd + word[tilde.end(1):]
    if tilde:  # `~-` (OLDPWD), `~2`, `~-1`: a folder the command's own cd and pushd chose
        raise Unread(f"{tilde[0]} names a folder of the shell's folder stack, which CodeAct does not read")
    if word.startswith("~"):
        return None
    return word


def own_names(words: list[str]) -> set[str]:
    """The variables a shell command sets from what it reads or runs, whose value is not known here: a loop's
    (``for f in $(find ...)``, ``select``), ``read``'s, ``mapfile``'s, ``getopts``', ``printf -v``'s, and an
    assignment whose value holds a substitution or a variable left unread (``f=$(find ...)``)."""
    names: set[str] = set()
    reading = ""
    for index, word in enumerate(words):
        if word and (set(word) <= SEPARATOR or word in ("do", "then")):
            reading = ""
            continue
        low = os.path.basename(word).lower()
        if low in SETS_NAMES:
            reading = low
        elif reading in ("for", "select"):  # its values: the words after `in` (none: "$@"), unknown if one is
            listed = words[index + 1:index + 1 + next((n for n, w in enumerate(words[index + 1:])
                                                       if w in ("do", ";", "\n") or set(w) <= SEPARATOR), 0)]
            if listed[:1] != ["in"] or any("$" in w or "`" in w for w in listed):  # a literal list is named
                names.add(word)
            reading = ""
        elif reading and not word.startswith("-"):
            names.add(word)
        if word == "-v" and index + 1 < len(words):  # `printf -v f ...`
            names.add(words[index + 1])
        elif word.startswith("-v") and index and words[index - 1] == "printf":  # `printf -vf`
            names.add(word[2:])
        assignment = ASSIGNMENT.fullmatch(word)
        if assignment and ("$" in assignment[3] or "`" in assignment[3]):
            names.add(assignment[1])
    return names
