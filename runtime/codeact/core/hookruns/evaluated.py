"""Where bash evaluates a word as arithmetic or as a variable's name, and the value there is not known here.

bash evaluates the operands of ``[[ ... -eq/-ne/-lt/-le/-gt/-ge ... ]]``, ``(( ))``, ``$(( ))``, ``$[ ]``,
``let``, a ``declare -i`` variable's value and an indexed array's subscript as arithmetic, and a name given to
``[[ -v ]]``, ``test -v``, ``printf -v``, ``read``, ``mapfile``, ``declare``, ``unset``, ``getopts``... as a
variable's name, whose subscript is arithmetic too: a value ``a[$(cmd)]`` there runs ``cmd``. So a variable whose
value is not known here (set by ``read``, a substitution, the environment, the shell itself) used there, or a name
made by an expansion (``read -r $X'T'``, ``declare "$n"=x``), makes the hooks file :class:`Unread`
(:func:`check_evaluated`). ``[ "$n" -gt 3 ]`` and ``test`` are not: their ``-gt`` reads a number, no expression.
"""
from __future__ import annotations

import os
import re
import shlex

from .bounds import Unread
from .names import PLUGIN_VARS, PROJECT_VARS, SEPARATOR, UNFOLLOWED_VARIABLES
from .words import SHELL_SET, nested_words, own_names

# What an arithmetic expression holds that bash reads as a variable: `$n`, `${n}`, `$(...)`, backticks, a bare name
_EXPANSION = re.compile(r"\$\{#?\w*|\$\w+|\$[(\[]|\$\Z|`")  # a lone `$`: shlex's half of `$(`
_SAFE_EXPANSION = re.compile(r"\$[?#$!]|\$\{#\w+(?:\[(?:[@*]|[0-9]+)\])?\}")  # `$?`, `$#`: numbers the shell
# sets; `${#n}`, `${#a[@]}`: a length
_BARE_NAME = re.compile(r"(?<![\w$#{.])[A-Za-z_]\w*")
_BASED_NUMBER = re.compile(r"\b\d+#\w+")  # `16#ff`: a number in base 16, no name
# Variables the shell sets to numbers itself (never a text another program chose)
_NUMERIC = frozenset(("RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS",
                      "OPTIND", "SHLVL", "HISTCMD"))
_COMPARISONS = frozenset(("-eq", "-ne", "-lt", "-le", "-gt", "-ge"))
_DECLARERS = frozenset(("declare", "typeset", "local", "export", "readonly"))
# Commands whose words name variables they set: the options whose value is another word (not a name)
_NAMERS = {"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "unset": "", "getopts": ""}
_OPENERS = frozenset(("!", "{", "then", "do", "else", "elif", "if", "while", "until", "time"))  # a command next
_REDIRECTS = frozenset((">", ">>", ">|", "&>", "&>>", "<", "<<", "<<<", "<>", ">&", "<&"))


def _unknown_in(expression: str, safe: set[str]) -> str | None:
    """What the arithmetic ``expression`` reads whose value is not known here: a substitution, an expansion other
    than a plain ``$n``/``${n}``, or a variable (``$n`` or a bare name) not in ``safe``; None where there is none."""
    text = _SAFE_EXPANSION.sub(" ", _NUMERIC_SUBSTITUTION.sub(_numeric_or_not, expression))
    for found in _EXPANSION.finditer(text):
        name = found[0].lstrip("${")
        end = found.end()
        if not name or not (name in safe or name in _NUMERIC) or found[0].startswith("${") and \
                text[end:end + 1] != "}":
            return found[0]
    text = _BASED_NUMBER.sub(" ", _EXPANSION.sub(" ", text))
    return next((name for name in _BARE_NAME.findall(text) if name not in safe and name not in _NUMERIC), None)


def _safe_names(words: list[str], known: set[str], own: set[str]) -> set[str]:
    """The variables whose value here is a number or a literal of the command: ``known`` (one plain
    ``NAME=literal``), and those a literal or an arithmetic expansion assigns (``x=1; x=$((x+1))``: its expression
    is read too) that nothing sets from what it reads (``own``, the shell's own aside)."""

    neutral = [_ARITHMETIC_ASSIGNMENT.sub(r"\1=0", word) if word[-1:] != "$" or not
               words[index + 1:index + 2] or not (words[index + 1].startswith("((") or
                                                  _numeric_after(words, index + 1)) else word[:-1] + "0"
               for index, word in enumerate(words)]  # unquoted, shlex splits it: `x=$`, `((`, `x+1`, `))`
    neutral = [_NUMERIC_SUBSTITUTION.sub(_numeric_or_not, word) if "$(" in word else word for word in neutral]
    own = (own - own_names(words)) | own_names(neutral)
    literal = {match[1] for word in neutral if (match := _LITERAL_ASSIGNMENT.fullmatch(word))}
    return (known | literal) - own - {name for name in literal if SHELL_SET.fullmatch(name)} | \
        {*PROJECT_VARS, *PLUGIN_VARS}


# Commands that print only numbers, whatever they read (the last of a substitution's pipe): `wc -l` of its input
# (no file: `wc -l *` prints the files' names), `date +%s`, `grep -c PATTERN` of its input, and jq whose filter,
# given literally, ends in `| length` at its top level (no `def`: `def length: ...` would rename it)
_COUNT_FLAGS = re.compile(r"-[lcwm]+|--(?:lines|bytes|words|chars)")
_GREP_FLAGS = re.compile(r"-[EFiwxPv]*c[EFiwxPv]*")
_JQ_FLAGS = re.compile(r"-[rcejnsMCSa]+|--(?:raw-output|compact-output|exit-status|null-input|slurp|join-output)")
_JQ_COUNT = re.compile(r"[^;]*\|\s*length\s*")  # and no `#`: jq's comment would hide the `| length`
_NUMERIC_SUBSTITUTION = re.compile(r"\$\(([^()`$]*)\)")  # `$(date +%s)` in a word: no substitution nested


def _numeric_command(words: list[str]) -> bool:
    """Whether the shell command ``words`` (a substitution's text split) prints only numbers: its pipe's last
    command is one of those above (the commands before it are read as any others are)."""
    last = words[len(words) - words[::-1].index("|"):] if "|" in words else words
    name, args = (os.path.basename(last[0]), last[1:]) if last else ("", [])
    if name == "wc":
        return bool(args) and all(_COUNT_FLAGS.fullmatch(arg) for arg in args)
    if name == "date":
        return args in (["+%s"], ["-u", "+%s"])
    operands = [arg for arg in args if not (_GREP_FLAGS if name == "grep" else _JQ_FLAGS).fullmatch(arg)]
    if name == "grep":
        return len(operands) == 1 and len(args) == 2 and not operands[0].startswith("-")
    return name == "jq" and len(operands) == 1 and "def" not in operands[0] and \
        "include" not in operands[0] and "import" not in operands[0] and "#" not in operands[0] \
        and bool(_JQ_COUNT.fullmatch(operands[0]))


def _numeric_after(words: list[str], at: int) -> bool:
    """Whether ``words[at:]`` open an unquoted substitution (``(``, shlex's half of ``$(``) whose command prints
    only numbers (:func:`_numeric_command`), to its closing ``)``; a quoted word's own words (which
    :func:`with_nested` reads after it) skipped."""
    if words[at] != "(":
        return False
    command: list[str] = []
    index = at + 1
    while index < len(words) and not words[index].startswith(")"):
        if set(words[index]) <= SEPARATOR - {"|"} or "$" in words[index] or "`" in words[index] or \
                words[index] in ("(", ")"):
            return False
        command.append(words[index])
        nested = nested_words(words[index]) if any(space in words[index] for space in " \t\n") else []
        if nested and words[index + 1:index + 1 + len(nested)] == nested:
            index += len(nested)
        index += 1
    return index < len(words) and bool(command) and _numeric_command(command)


def _numeric_or_not(match: re.Match[str]) -> str:
    """A substitution's text as arithmetic reads it: ``0`` where its command prints only numbers."""
    try:
        command = shlex.split(match[1])
    except ValueError:
        return match[0]
    return " 0 " if command and _numeric_command(command) else match[0]


_LITERAL_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)\+?=([^$`(][^$`]*|)", re.DOTALL)
_ARITHMETIC_ASSIGNMENT = re.compile(r"\A([A-Za-z_]\w*)\+?=\$\(\([^()]*\)\)\Z")  # `x=$((x+1))`


def _made_name(word: str) -> bool:
    """Whether ``word``, where a variable's name is expected, is made by an expansion (``$X'T'``, ``"$n"``)."""
    return "$" in word or "`" in word


def _refuse(what: str, word: str) -> None:
    raise Unread(f"bash evaluates {word!r} {what}, a value CodeAct does not know (a[$(cmd)] runs cmd); use a "
                 "literal or compare with [ ]")


def check_evaluated(words: list[str], known: set[str], own: set[str]) -> None:
    """:class:`Unread` where the shell command ``words`` (its own literals read: :func:`assigned`) evaluates a
    value not known here as arithmetic or as a variable's name (the module's doc). ``known``: the variables one
    plain ``NAME=literal`` of the command sets (:func:`known_names`); ``own``: those it sets from what it reads
    (:func:`own_names`)."""
    safe = _safe_names(words, known, own)
    integer = _integer_names(words)
    depth = 0  # inside `(( ))` or `$(( ))`: the parentheses open
    test = False  # inside `[[ ]]`
    command = ""  # the simple command's name, "" at a command's place
    for index, word in enumerate(words):
        for expression in _arithmetic_parts(word):  # a quoted `"$(( n + 1 ))"`, `$[n]`: one word
            _check_expression(expression, safe, "as arithmetic")
        if depth:  # `(( n > 3 ))`: every word to the closing parentheses
            depth += word.count("(") - word.count(")") if word and set(word) <= SEPARATOR else 0  # `));`
            if depth > 0:
                _check_expression(word, safe, "as arithmetic")
            continue
        if word.startswith("((") and set(word) <= SEPARATOR and \
                (not command or words[index - 1][-1:] == "$" or words[index - 1] == "for"):
            depth = word.count("(") - word.count(")")
            continue
        test = (test or word == "[[") and word != "]]"
        _check_test(words, index, test, command, safe)
        if word and set(word) <= SEPARATOR:
            command = ""
            continue
        _check_assignment(word, safe, integer)
        _check_defaults(word, safe, integer)
        if not command:
            command = "" if _ASSIGNMENT_WORD.fullmatch(word) or word in _OPENERS else os.path.basename(word)
        else:
            _check_argument(command, words, index, safe)
            _check_set_name(command, words, index, integer)


def _arithmetic_parts(word: str) -> list[str]:
    """The expressions of ``word``'s ``$(( ))`` and ``$[ ]``, each to its balanced closing brackets (``"took $((
    b - a ))s"``: ``b - a``, not the ``s`` after); one not closed, to the word's end."""
    parts: list[str] = []
    at = min((found for found in (word.find("$(("), word.find("$[")) if found >= 0), default=-1)
    while at >= 0:
        depth, end = 0, at + 1
        while end < len(word):
            depth += 1 if word[end] in "([" else -1 if word[end] in ")]" else 0
            if depth == 0:
                break
            end += 1
        parts.append(word[at + 2:end + 1])
        at = min((found for found in (word.find("$((", end), word.find("$[", end)) if found >= 0), default=-1)
    return parts


_ASSIGNMENT_WORD = re.compile(r"([A-Za-z_]\w*)(\[[^]]*\])?\+?=(.*)", re.DOTALL)


def _check_expression(expression: str, safe: set[str], what: str) -> None:
    unknown = _unknown_in(expression, safe)
    if unknown:
        _refuse(what, unknown)


def _check_test(words: list[str], index: int, test: bool, command: str, safe: set[str]) -> None:
    """:class:`Unread` where ``words[index]`` is ``[[``'s arithmetic comparison of a value not known here (``[[ $n
    -gt 3 ]]``, ``[[ $(cmd) -gt 3 ]]``) or a ``-v`` (``[[``, ``[``, ``test``) of a name an expansion makes."""
    word = words[index]
    if test and word in _COMPARISONS:
        for operand in words[index - 1:index + 2:2]:
            _check_expression("$(" if operand == ")" else operand, safe, f"as {word}'s arithmetic")
    elif word == "-v" and (test or command in ("[", "test")) and index + 1 < len(words) and \
            _made_name(words[index + 1]):
        _refuse("as -v's variable name", words[index + 1])


def _check_assignment(word: str, safe: set[str], integer: set[str]) -> None:
    """:class:`Unread` where the word ``word`` assigns an indexed array's item by a subscript not known here
    (``a[$n]=x``), or a ``declare -i`` variable (``integer``: :func:`_integer_names`) a value not known."""
    assignment = _ASSIGNMENT_WORD.fullmatch(word)
    if assignment is None:
        return
    if assignment[2]:  # `a[$n]=x`: an indexed array's subscript is arithmetic
        _check_expression(assignment[2][1:-1], safe, "as an array's subscript")
    if assignment[1] in integer:  # `declare -i x=$n`, `declare -i x; x=$n`
        _check_expression(assignment[3], safe, "as a declare -i variable's arithmetic")


_DEFAULT = re.compile(r"\$\{([A-Za-z_]\w*):?=([^{}]*)\}")  # `${x:=v}`, `${x=v}`: sets x to v where unset
# Commands that set the variables their words name to what they read or print (not a literal of the command)
_READERS = frozenset(("read", "mapfile", "readarray", "getopts", "printf", "for", "select"))


def _check_defaults(word: str, safe: set[str], integer: set[str]) -> None:
    """:class:`Unread` where ``word``'s ``${x:=v}`` sets a variable whose value is code (``PS4``,
    ``PROMPT_COMMAND``: :data:`UNFOLLOWED_VARIABLES`), or an integer one (``declare -i``) a value not known."""
    for match in _DEFAULT.finditer(word):
        if UNFOLLOWED_VARIABLES.fullmatch(match[1]):
            raise Unread(f"it sets {match[1]}, which makes the command read a file CodeAct does not follow")
        if match[1] in integer:
            _check_expression(match[2], safe, "as a declare -i variable's arithmetic")


def _set_name(command: str, words: list[str], index: int) -> str:
    """The variable ``words[index]``, an argument of ``command``, names for ``command`` to set from what it reads
    (``read -r x``, ``printf -v x``, ``printf -vx``, ``mapfile x``, ``getopts o x``, ``for x``, ``select x``); ""
    where it names none."""
    word, before = words[index], words[index - 1]
    if command == "printf":
        return word if before == "-v" else word[2:] if word.startswith("-v") else ""
    if command in ("for", "select"):
        return word if before == command else ""
    if word[:1] == "-" or before[:1] == "-" and before[-1:] in _NAMERS.get(command, "") and len(before) >= 2:
        return ""  # an option, or its value (`read -p "$prompt"`, `mapfile -t -d x`)
    return word.partition("[")[0] if command in _NAMERS and command != "unset" else ""


def _check_set_name(command: str, words: list[str], index: int, integer: set[str]) -> None:
    """:class:`Unread` where ``words[index]`` names a variable that ``command`` sets from what it reads (the data
    of a pipe, a file, a format's output) and that variable's value is code bash runs (``read -r PS4; set -x``:
    PS4 is prompt-expanded, its ``$(cmd)`` run; :data:`UNFOLLOWED_VARIABLES`), or an integer (``declare -i x;
    read x``: bash evaluates every value given to it as arithmetic, whoever gives it)."""
    if command not in _READERS or words[index - 1] in _REDIRECTS:
        return
    name = _set_name(command, words, index)
    if name and UNFOLLOWED_VARIABLES.fullmatch(name):
        raise Unread(f"{command} sets {name}, which makes the command read a file CodeAct does not follow")
    if name in integer:
        _refuse(f"as a declare -i variable's arithmetic ({command} sets it)", name)


def _integer_names(words: list[str]) -> set[str]:
    """The variables ``declare -i`` (``typeset``, ``local``, ``-ri``...) makes integers in ``words``: each
    assignment to one evaluates its value as arithmetic."""
    found: set[str] = set()
    command, integers = "", False
    for word in words:
        if word and set(word) <= SEPARATOR:
            command, integers = "", False
        elif not command:
            command = word if word in _DECLARERS else "" if word in _OPENERS else " "
        elif command in _DECLARERS and re.fullmatch(r"[-+][a-zA-Z]*i[a-zA-Z]*", word):
            integers = True
        elif integers and word[:1] not in "-+":
            found.add(word.partition("=")[0].partition("+")[0].partition("[")[0])
    return found


def _check_argument(command: str, words: list[str], index: int, safe: set[str]) -> None:
    """:class:`Unread` where ``words[index]``, an argument of ``command``, is a name made by an expansion that
    ``command`` sets or evaluates (``read -r $n``, ``printf -v "$n"``, ``declare "$n"=x``, ``unset $n``,
    ``getopts a: $n``, ``eval $X'T'=x``), or arithmetic not known here (``let``)."""
    word = words[index]
    before = words[index - 1]
    if before in _REDIRECTS:
        return
    if command == "let":
        unknown = _unknown_in(word, safe)
        if unknown:
            _refuse("as let's arithmetic", unknown)
    elif command == "printf" and (before == "-v" or word.startswith("-v")):
        if _made_name(word if before == "-v" else word[2:]):
            _refuse("as printf -v's variable name", word)
    elif command in _DECLARERS and word[:1] not in "-+" and _made_name(word.partition("=")[0]):
        _refuse(f"as {command}'s variable name", word)
    elif command == "eval" and "=" in word and _made_name(word.partition("=")[0]):
        _refuse("as eval's variable name", word)
    elif command in _NAMERS and word[:1] != "-" and _made_name(word):
        valued = _NAMERS[command]
        if not (before[:1] == "-" and before[-1:] in valued and len(before) >= 2):  # `read -p "$prompt"`
            if command != "getopts" or index >= 2 and words[index - 2] == "getopts":  # getopts' name: 2nd
                _refuse(f"as {command}'s variable name", word)
