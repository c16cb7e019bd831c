"""What a command does with its input and output: whether it reads code from a pipe or a here-document, runs a
command the reader does not know, or writes the files another command then runs."""
from __future__ import annotations

import bisect
import fnmatch
import os
import re
import sys
from collections.abc import Callable

from .bounds import Unread
from .evaluated import check_evaluated
from .filters import check_filter, from_stdin
from .names import (
    AWKS,
    COMPOUND_CLOSE,
    COMPOUND_OPEN,
    COPIERS,
    FILTERS,
    INTERPRETERS,
    KEYWORDS,
    MAKE_FILES,
    MAKES,
    NODE_FLAGS,
    NPMS,
    NPXS,
    OUTPUT_REDIRECTS,
    PACKAGE_RUNNERS,
    PLUGIN_VARS,
    PROJECT_VARS,
    PWSH,
    PYTHON,
    PYTHON_CODE_RUNS,
    PYTHON_DATA_MODULES,
    READ_ONLY,
    RUNS_CODE,
    SCRIPT_SUFFIXES,
    SCRIPT_VALUED,
    SEPARATOR,
    SHELL_NAMES,
    SHELLS,
    SPECIAL,
    STDIN_DATA,
    STDIN_RUNNERS,
    WRAPPERS,
)
from .options import runner_options
from .paths import as_pattern, command_bases
from .words import (
    ASSIGNMENT,
    VARIABLE,
    as_flag,
    assigned,
    expand_word,
    known_names,
    own_names,
    set_names,
    shell_words,
    substitutions,
)


def reads_code(words: list[str], at: int, strict: bool = True) -> bool:
    """Whether the command ``words[at]``, given a pipe or a here-document as its stdin, may run code it reads there.
    Only what is known to read it as data is not (``strict``, a POSIX shell's words): a command of
    :data:`STDIN_DATA` (``jq``, ``grep``, ``tee``...), awk and sed (their program read by :mod:`.filters`), xargs
    (its command read by the runners), make not reading its Makefile from stdin, ``npm run x``, a shell, python or
    node given a script file (``| python3 guard.py``: the hook's own, protected by its name) or a shell's ``-c``
    text none of whose commands reads code there, perl, ruby, ``deno run`` or PowerShell given a script file, npx
    running such a command, and a script of the repository named by its path (``| ./scripts/check.sh``). Any other
    (a name not known here, a wrapper: ``flock l sh``, ``taskset 1 sh``; an interpreter with no script, or stdin
    as it under any spelling: ``bash //dev/stdin``) may. Not ``strict`` (PowerShell's or cmd's words), only a
    command known to run what it reads does (:data:`STDIN_RUNNERS`, :data:`RUNS_CODE`)."""
    word = words[at]
    name = os.path.basename(word.replace("\\", "/")).lower()
    end = next((n for n in range(at + 1, min(len(words), at + 64)) if set(words[n]) <= SEPARATOR), len(words))
    if name in STDIN_DATA or name in FILTERS or name in ("xargs", "gxargs"):
        return data_tool_runs(name, words[at + 1:end])
    if name in _STDIN_LINTERS:
        return False
    ran = _runner_reads_code(name, words, at, end, strict)
    if ran is not None:
        return ran
    if name in STDIN_RUNNERS:
        return not (name == "sqlite3" and "-safe" in words[at + 1:end])
    if name in MAKES:
        return any(key in MAKE_FILES and from_stdin(value) for key, value in runner_options(words, at + 1, True))
    if strict and (name in NPMS or name in PACKAGE_RUNNERS):
        return not runs_named_script(words, at + 1, end)
    if strict and name in NPXS:
        return _npx_reads_code(words, at + 1, end)
    kind = "shell" if name in SHELL_NAMES and name != "busybox" else "python" if PYTHON.fullmatch(name) else \
        "node" if name in ("node", "nodejs", "node.exe", "tsx", "ts-node", "ts-node-esm") else ""
    if kind == "python" and python_code_reads_data(words, at + 1, end):
        return False  # `| python3 -c 'import json,sys; print(json.load(sys.stdin)["x"])'`: its code is its words
    if kind == "shell":
        text = _shell_text(words, at + 1, end)
        if text is not None:  # `| bash -c 'text'`: the pipe is data, unless the text's commands read code there
            return _text_reads_code(text)
    if kind:
        return no_script(kind, words, at + 1, end)
    if _script_given(name, words, at + 1, end):
        return False
    if not strict:
        return name in RUNS_CODE or name in SHELLS
    return not tree_script(word, words)


# The long options of the data tools that have one that runs code (GNU sort 9's, as getopt_long reads them: any
# prefix unambiguous among them names it), and those that run code or take a program
LONG_OPTIONS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "sort": (("ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting",
              "month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "random-source", "reverse", "sort",
              "version-sort", "batch-size", "check", "compress-program", "debug", "files0-from", "key", "merge",
              "output", "stable", "buffer-size", "field-separator", "temporary-directory", "parallel", "unique",
              "zero-terminated", "help", "version"), frozenset(("compress-program",))),
}
LONG_OPTIONS["gsort"] = LONG_OPTIONS["sort"]
_MAPFILE_VALUED = "dnOsucC"  # mapfile's (readarray's) options that take a value: `-C` a callback it evaluates


def long_option(word: str, options: tuple[str, ...]) -> str | None:
    """The long option ``word`` (``--co=sh``, ``--co``) names as getopt_long reads it: its exact name, or the one
    option of ``options`` it is a prefix of; None where it names none or is ambiguous."""
    key = word[2:].partition("=")[0]
    if key in options:
        return key
    found = [option for option in options if option.startswith(key)]
    return found[0] if len(found) == 1 else None


def data_tool_runs(name: str, words: list[str]) -> bool:
    """Whether a data tool of :data:`STDIN_DATA` (``name``, its words ``words``) runs code after all: sort's
    ``--compress-program`` under any prefix getopt_long takes (``--co=sh``; a long option it does not know, or an
    ambiguous one, counts), mapfile's or readarray's ``-C`` callback (``-tC eval``, evaluated with each line; a
    word not known here: a variable may be ``-C``)."""
    if name in LONG_OPTIONS:
        options, runs = LONG_OPTIONS[name]
        for word in words:
            if word == "--":
                break
            if word.startswith("--") and long_option(word, options) in (None, *runs):
                return True
    if name in ("mapfile", "readarray"):
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if "$" in word or "`" in word:
                return True
            if word == "--" or word[:1] != "-" or word == "-":
                return False
            for at, letter in enumerate(word[1:], 1):
                if letter == "C" or not letter.isalpha():
                    return True
                if letter in _MAPFILE_VALUED:
                    index += at == len(word) - 1  # the rest of the word, or the next, is its value
                    break
    return False


# Wrappers that run the command after them on the same stdin, reading nothing of it themselves (env's `-S` aside)
_TRANSPARENT = frozenset(("timeout", "nice", "nohup", "stdbuf", "env", "ionice", "time"))
_WRAPPER_FLAGS = frozenset(("--foreground", "--preserve-status", "--verbose", "-v", "--ignore-environment", "-i",
                            "-0", "--null", "-p"))
# Project runners whose `run` runs a command (or a script file) of the project: `uv run x.py`, `poetry run python`
_PROJECT_RUNNERS = frozenset(("uv", "uv.exe", "poetry", "pipenv", "pdm", "hatch", "rye"))
_RUN_VALUED = frozenset(("--with", "--python", "-p", "--project", "--directory", "--package", "--extra", "--group",
                         "--env-file", "--index", "--with-requirements", "--with-editable", "-e", "--env"))
_RUN_FLAGS = frozenset(("--frozen", "--locked", "--no-sync", "--isolated", "--no-project", "--quiet", "-q",
                        "--no-dev", "--all-extras", "--script", "--offline", "--active", "--exact", "-v"))
# Linters and formatters that read a pipe as the text they check or format, running nothing it says
_STDIN_LINTERS = frozenset(("shellcheck", "prettier", "eslint", "biome", "ruff", "black", "isort", "stylelint",
                            "markdownlint", "yamllint", "shfmt", "gofmt", "clang-format", "dprint", "taplo",
                            "codespell", "typos", "file"))


def _wrapped(words: list[str], index: int, end: int, valued: str) -> int | None:
    """The index of the command a transparent wrapper (its words from ``words[index]``, ``valued`` its short options
    that take a value) runs: past its options, a duration, ``VAR=x``; None where an option is not known here (env's
    ``-S``, a long option taking the next word)."""
    while index < end:
        word = words[index]
        if word == "--":
            return index + 1 if index + 1 < end else None
        if word.startswith("--"):
            if "=" not in word and word not in _WRAPPER_FLAGS:
                return None
        elif word[:1] == "-" and len(word) > 1:
            if word[1] in valued:
                index += len(word) == 2  # `nice -n 5`, `timeout -s KILL`: the next word its value
            elif word not in _WRAPPER_FLAGS and not re.fullmatch(r"-[0-9]+", word):
                return None  # `env -S 'text'` (split into a command), an option not known here
        elif not (_DURATION.fullmatch(word) or ASSIGNMENT.fullmatch(word)):
            return index
        index += 1
    return None


def _run_target(words: list[str], index: int, end: int) -> int | None:
    """The index of the command (or script file) ``uv run`` (``poetry run``...) runs, its options from
    ``words[index]``; None where one is not known here."""
    while index < end:
        word = words[index]
        if word == "--":
            return index + 1 if index + 1 < end else None
        if word[:1] != "-":
            return index
        if word in _RUN_VALUED:
            index += 1
        elif "=" not in word and word not in _RUN_FLAGS:
            return None
        index += 1
    return None


def _runner_reads_code(name: str, words: list[str], at: int, end: int, strict: bool) -> bool | None:
    """:func:`reads_code` for a wrapper or a project's runner (``name`` at ``words[at]``): whether what it runs
    reads code from the pipe (``| timeout 10 ./x.sh``, ``| nice jq .``, ``| uv run scripts/guard.py``, ``| poetry
    run python x.py``, ``| go run ./cmd/guard``, ``| pnpm exec tsx x.ts``, ``| bun run x.ts``: data); None where
    ``name`` is none of them."""
    subcommand = words[at + 1] if at + 1 < end else ""
    if strict and name in _TRANSPARENT:
        after = _wrapped(words, at + 1, end, WRAPPERS[name])
        return after is None or reads_code(words, after, strict)
    if strict and name in _PROJECT_RUNNERS and subcommand == "run":
        after = _run_target(words, at + 2, end)
        return after is None or reads_code(words, after, strict)
    if strict and name in ("go", "go.exe") and subcommand == "run":
        target = next((word for word in words[at + 2:end] if word[:1] != "-"), "")
        return not (target.startswith("./") or target == "." or target.endswith(".go"))  # a local package
    if strict and name in PACKAGE_RUNNERS and subcommand in ("exec", "dlx", "x"):
        return _npx_reads_code(words, at + 2, end)
    if name in ("bun", "bun.exe") and subcommand == "run":
        target = next((word for word in words[at + 2:end] if word[:1] != "-"), "")
        if ("/" in target or target.endswith(SCRIPT_SUFFIXES)) and not from_stdin(target):
            return False  # a script file, protected by its name
    return None


def tree_script(word: str, words: list[str]) -> bool:
    """Whether the command ``word`` is a script of the repository named by its path (``./scripts/check.sh``,
    ``"$CLAUDE_PROJECT_DIR"/.github/hooks/x.sh``), which the hook's reading protects: a relative path that climbs no
    ``..`` from a command that changes to no folder outside the tree, or one below the project's variable."""
    path = word.replace("\\", "/")
    for name in (*PROJECT_VARS, *PLUGIN_VARS):
        for form in (f"${{{name}}}/", f"${name}/"):
            if path.startswith(form):
                path = path[len(form):]
    if "/" not in word.replace("\\", "/") or path[:1] in ("/", "~") or "$" in path or "`" in path or \
            from_stdin(path) or os.path.normpath(path).split("/")[0] == "..":
        return False
    try:
        bases = command_bases(words, _TREE, _TREE, False)
    except Unread:
        return False
    return all(base == _TREE or base.startswith(_TREE + "/") for base in bases)


_TREE = "/\x00tree"  # a folder standing for the repository's, no real one


def runs_named_script(words: list[str], index: int, end: int) -> bool:
    """Whether npm, pnpm, yarn or bun with its words from ``words[index]`` runs a script its package.json names
    (``npm run lint``, ``npm test``: that file is protected), not a file or stdin (``bun run -``)."""
    while index < end and words[index][:1] == "-":
        index += 1
    if index >= end or words[index] not in ("run", "run-script", "test", "t", "tst", "start"):
        return False
    if words[index] not in ("run", "run-script"):
        return True
    index += 1
    while index < end and words[index][:1] == "-":
        index += 1
    return index < end and not from_stdin(words[index]) and not any(c in words[index] for c in "/\\.$`")


def _npx_reads_code(words: list[str], index: int, end: int) -> bool:
    """Whether npx (pnpx, bunx) with its words from ``words[index]`` may run code a pipe gives it: its package's
    command is read as the pipe's reader (``| npx --yes tsx scripts/x.ts`` is data, ``| npx zx`` not: a package
    may be any interpreter), and its ``-c`` text as a shell's."""
    while index < end:
        word = words[index]
        key, equals, value = word.partition("=")
        if key in ("-c", "--call"):
            return _text_reads_code(value if equals else words[index + 1] if index + 1 < end else "")
        if word in ("-p", "--package"):
            index += 2
        elif word[:1] == "-":
            index += 1
        else:
            package = re.sub(r"(?<=.)@[^/]*$", "", word)  # `prettier@3`, `@scope/x@1`: the package's name
            return reads_code([package.rsplit("/", 1)[-1], *words[index + 1:end]], 0)
    return True


def _shell_text(words: list[str], index: int, end: int) -> str | None:
    """The ``-c`` text of a shell whose options start at ``words[index]`` (``bash -c 'text'``, ``sh -ec``,
    ``bash -o pipefail -c``); None where there is none or an option is not known here (``-s``, ``-i``)."""
    text = False
    while index < end:
        word = words[index]
        index += 1
        if word in ("-o", "+o") or word in ("-O", "+O"):
            index += 1
        elif re.fullmatch(r"[-+][ceuxvfnaBCEhHkmPT]+", word):
            text = text or (word[0] == "-" and "c" in word)
        else:
            return word if text and word[:1] not in "-+<>&" and not set(word) <= SEPARATOR else None
    return None


def _text_reads_code(text: str) -> bool:
    """Whether a shell's ``-c`` text, given a pipe as its stdin, has a command that may run code read there
    (:func:`reads_code`, each command of the text: ``bash -c 'sh'``, ``bash -c 'env python3'``,
    ``bash -c 'jq . | sh'``) or names stdin (``source /dev/stdin``, ``. //dev/stdin``)."""
    words = shell_words(text, 2)
    if any(from_stdin(word) for word in words):
        return True
    start = True
    for index, word in enumerate(words):
        if word in ("for", "select", "case") and start:  # their words up to `do` or a pattern are no command
            start = False
        elif not word or set(word) <= SEPARATOR or word in KEYWORDS or word in COMPOUND_OPEN or \
                word in COMPOUND_CLOSE:
            start = True
        elif start and not ASSIGNMENT.fullmatch(word):
            start = False
            if reads_code(words, index):
                return True
    return False


_PERL_FLAGS = {"perl": re.compile(r"-[wWTtlnpas0-9]+"), "ruby": re.compile(r"-[wWnpalsv]+")}


def _script_given(name: str, words: list[str], index: int, end: int) -> bool:
    """Whether perl, ruby, ``deno run`` or PowerShell (``name``, its words from ``words[index]``) runs a script
    file it is given (``perl x.pl``, ``deno run -A x.ts``, ``pwsh -NoProfile -File x.ps1``), reading a pipe as
    data; False where it may read its code there or an option is not known here."""
    def script(at: int) -> bool:
        word = words[at] if at < end else ""
        return bool(word) and word[:1] not in "-+<>&" and not set(word) <= SEPARATOR and not from_stdin(word)

    if name in _PERL_FLAGS:
        while index < end and _PERL_FLAGS[name].fullmatch(words[index]):
            index += 1
        return script(index)
    if name in ("deno", "deno.exe"):
        if index >= end or words[index] != "run":
            return False
        index += 1
        while index < end and (words[index] in ("-A", "-q", "--quiet", "--no-check", "--no-prompt")
                               or words[index].startswith(("--allow-", "--deny-"))):
            index += 1
        return script(index)
    if name in PWSH:
        while index < end:
            flag = as_flag(words[index])
            index += 1
            if flag in ("-file", "-f"):
                return script(index)
            if flag in ("-executionpolicy", "-ex", "-ep"):
                index += 1
            elif flag not in ("-noprofile", "-nop", "-nologo", "-nol", "-noninteractive", "-noni"):
                return False
    return False


_REPLS = frozenset(("ipython", "ptpython", "bpython", "xonsh", "jupyter", "jupyter_console", "pdb", "code",
                    "IPython", "pip", "idlelib", "trace", "cProfile", "profile", "runpy", "timeit", "doctest"))


def _project_module(module: str) -> bool:
    """Whether ``python -m module`` runs a module of the project (read as its files, protected) that reads a pipe as
    data: a dotted name (``scripts.guard``) whose top package is no module of the standard library nor a known
    interpreter (``IPython``, ``code``)."""
    top = module.split(".")[0]
    return bool(re.fullmatch(r"\w+(?:\.\w+)+", module)) and top not in sys.stdlib_module_names and \
        top not in _REPLS and top.lower() not in _REPLS


def python_code_reads_data(words: list[str], index: int, end: int) -> bool:
    """Whether python, its options starting at ``words[index]``, runs ``-c`` code (its own words, read as the
    command's) that reads stdin as data only: the code holds no expansion, imports only
    :data:`PYTHON_DATA_MODULES` and names none of :data:`PYTHON_CODE_RUNS` (``exec(sys.stdin.read())``,
    ``__import__``, ``open``: not), and no ``-i`` (a prompt reading stdin after the code) or ``-m`` comes first."""
    while index < end:
        word = words[index]
        index += 1
        if word in SCRIPT_VALUED["python"]:
            index += 1
            continue
        if not re.fullmatch(r"-[bBdEIOPqsSuvx]*c.*", word, re.S):
            return bool(re.fullmatch(r"-[bBdEIOPqsSuvx]+|-[WX].+", word)) and python_code_reads_data(words, index, end)
        code = word[word.index("c") + 1:] or (words[index] if index < end else "")
        if not code or "$" in code or "`" in code or PYTHON_CODE_RUNS.search(code):
            return False
        imported = re.findall(r"\bfrom\s+([\w.]+)\s+import\s+(?:\([\w\s,]*\)|\w+(?:\s+as\s+\w+)?(?:[ \t]*,[ \t]*\w+(?:"
                              r"\s+as\s+\w+)?)*)", code)
        rest = re.sub(r"\bfrom\s+([\w.]+)\s+import\s+(?:\([\w\s,]*\)|\w+(?:\s+as\s+\w+)?(?:[ \t]*,[ \t]*\w+(?:"
                      r"\s+as\s+\w+)?)*)", "", code)
        statements = re.findall(r"\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:\s+as\s+\w+)?)*)", rest)
        imported += [name.strip().split(" as ")[0].strip() for line in statements for name in line.split(",")]
        return len(re.findall(r"\bimport\b", rest)) == len(statements) and all(
            name in PYTHON_DATA_MODULES for name in imported)
    return False


def no_script(kind: str, words: list[str], index: int, end: int) -> bool:
    """Whether a shell, python or node (``kind``) whose options start at ``words[index]`` runs no script file:
    none is given before ``end``, or it is stdin, or an option reads code (``-s``, ``-i``, ``-c``, ``-m``, ``-e``)
    or is not known here (what it takes is not)."""
    while index < end:
        word = words[index]
        index += 1
        if not word or word[0] in "<>&" or word.isdigit():
            return True  # a redirection between them: its script is not the next word
        if word == "--":
            return index >= end or from_stdin(words[index])
        if word[:1] not in "-+" or word == "-":
            return from_stdin(word)  # the script it runs: a file, or stdin again
        if word in SCRIPT_VALUED[kind]:
            index += 1
        elif kind == "node":
            if "=" not in word and word not in NODE_FLAGS:  # -e, -p, -i, an option not known here
                return True
        elif kind == "python" and re.fullmatch(r"-[bBdEhIOPqsSuvx]*m.*", word):
            module = word[word.index("m") + 1:] or (words[index] if index < end else "")
            return not _project_module(module)  # `| python3 -m scripts.guard`: the project's, protected
        elif not word.startswith("--"):
            letters = word[1:]
            valued = next((n for n, letter in enumerate(letters) if letter in ("oO" if kind == "shell" else "WX")),
                          None)
            if set(letters[:valued]) & set("sic" if kind == "shell" else "cmi"):
                return True  # a shell's `-s`, `-i`, `-c`; python's `-c`, `-m`, `-i`
            index += valued is not None and not (kind == "python" and letters[valued + 1:])  # `-eo x`, `-Wx`
    return True
_DURATION = re.compile(r"[0-9.]+[smhd]?")


def _unknown(word: str, own: set[str], root: str, cwd: str, plugin: bool,
             changed: frozenset[str] = frozenset()) -> bool:
    """Whether the shell word ``word`` names what a command's own output or reading decides: a command
    substitution (``$(...)``, backticks), a variable of ``own`` (:func:`own_names`), a positional or special
    parameter (``$1``, ``$@``), ``~-``, a lone variable the command sets in a way not known (``changed``:
    ``T+=y; $T``). A variable of the environment not known here (``$X``) is not."""
    if "`" in word or "$(" in word or word == "$" or word.startswith("~-"):
        return True
    if "$" not in word or expand_word(word, root, cwd, plugin) is not None:
        return False
    if any(name in own for match in VARIABLE.finditer(word) for name in match.groups() if name):
        return True  # `read -r f`'s, a loop's over a substitution: a value that may be anything, `..` too
    if as_pattern(word, root, cwd, plugin) is not None:  # `scripts/$X.sh`: every file it may be is protected
        return False
    if any(name in changed for match in VARIABLE.finditer(word) for name in match.groups() if name):
        return True  # `T=./x; T+=y; $T`: a value the command set, not known, with no name beside it
    return bool(SPECIAL.search(word))


_UNKNOWN = "which CodeAct does not read; name the script by its path"


def check_commands(words: list[str], root: str, cwd: str, plugin: bool, own: set[str] | None = None,
                    depth: int = 0, written: frozenset[str] = frozenset()) -> None:
    """:class:`Unread` where the shell command ``words`` (split once, its own assignments read) runs what its own
    output or reading decides: such a word (:func:`_unknown`: ``for f in $(find ...); do bash $f``, ``find ... |
    while read -r f; do "$f"``, ``$(...)``) or a process substitution at a command's place or as the script an
    interpreter runs (``sh <(find ...)``, ``sh < <(find ...)``); or a command that runs code reading a pipe
    (``find ... | sh``, ``|& sh``), behind a wrapper too (``| env sh``, ``| command sh``, ``| nice -n 5 sh``).
    A shell's ``-c`` text and ``eval``'s are read the same way, two levels deep. And where it runs a script it
    wrote itself (``... > /tmp/h.sh; bash /tmp/h.sh``, :func:`_written`) or one of a temporary folder."""
    reader = _CommandReader(root, cwd, plugin, own if own is not None else own_names(words), depth)
    reader.words, reader.written = words, written | _written(words)
    reader.changed = frozenset(set_names(words))
    check_evaluated(words, known_names(words, False)[0], reader.own)
    for index, word in enumerate(words):
        reader.at = index
        check_filter(words, index)
        if word == "cdable_vars":  # `shopt -s cdable_vars`: `cd d` goes where $d says
            raise Unread("shopt cdable_vars makes cd read a folder from a variable, which CodeAct does not follow")
        if word[:1] == "-" and "n" in word[1:] and not word.startswith("--") and index and \
                words[index - 1] in ("declare", "typeset", "local"):  # a nameref: a variable naming another
            raise Unread(f"{words[index - 1]} {word} makes a variable name another, which CodeAct does not follow")
        reader.read(word)


# Where a script run is one another command may have written (`bash /tmp/h.sh`): a temporary folder
_TEMPORARY = ("/tmp/", "/var/tmp/", "/dev/shm/", "/private/tmp/", "/private/var/folders/", "$TMPDIR", "${TMPDIR",
              "$TMP/", "${TMP}", "$TEMP/", "${TEMP}", "$RUNNER_TEMP", "${RUNNER_TEMP")
_WRITERS = frozenset(("tee", "cp", "mv", "install", "ln", "rsync"))  # their operands: files written
_FIND_WRITES = frozenset(("-fprint", "-fprint0", "-fprintf", "-fls"))


def _written(words: list[str]) -> frozenset[str]:
    """The names (last parts) of the files the shell command ``words`` writes: a redirection's (``> x``,
    ``>> x``), ``tee``'s, ``cp``'s, ``mv``'s, ``install``'s, ``ln``'s operands, find's ``-fprint*`` file,
    dd's ``of=``, and those :func:`_tool_writes` reads (``sort -o``, ``curl -o``, ``xxd -r in out``, ``uniq in
    out``, ``gzip -d``, sed's ``w``, awk's ``print > "x"``); :data:`_ANY_FILE` where a command writes files its words do not name (``tar -x``, ``unzip``);
    ``/dev/`` files and descriptors aside."""
    found: set[str] = set()
    writer, command = False, ""
    for index, word in enumerate(words):
        if not word or set(word) <= SEPARATOR:
            writer, command = False, ""
            continue
        if not command and not ASSIGNMENT.fullmatch(word):
            command = os.path.basename(word).lower()
            command = "" if command in WRAPPERS else command
        target = ""
        if (word in OUTPUT_REDIRECTS or word in _FIND_WRITES or word == "<>") and index + 1 < len(words):
            target = words[index + 1]
        elif word.startswith("of="):
            target = word[3:]
        elif writer and word[:1] != "-":
            target = word
        else:
            writer = writer or os.path.basename(word).lower() in _WRITERS
        for written in (target, *_tool_writes(command, words, index)):
            name = os.path.basename(written.strip().rstrip("/"))
            if name and not written.startswith("/dev/") and not name.isdigit():
                found.add(name)
    return frozenset(found)


_ANY_FILE = "\x00any"  # :func:`_written`'s mark of a command that writes files its words do not name
_UNPACKERS = frozenset(("tar", "gtar", "bsdtar", "unzip", "split", "gsplit", "csplit", "patch", "cpio", "7z", "7za",
                        "gunzip", "bunzip2", "unxz", "unzstd", "ar"))
# Data tools that write their operands after the first (`xxd [-r] in out`, `uniq in out`, `lz4 in out`, `dos2unix -n
# in out`), with their options that take the next word as a value; and those whose `-o` (`--output`) names a file
_OPERAND_WRITERS = {"xxd": frozenset(("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s",
                                      "-seek", "-n", "-name")),
                    "uniq": frozenset(("-f", "-s", "-w", "--group", "--all-repeated")),
                    "lz4": frozenset(("-B", "-b", "-e", "-i")), "dos2unix": frozenset(), "unix2dos": frozenset()}
_OUTPUT_WRITERS = frozenset(("sort", "gsort", "curl", "wget", "shuf", "iconv", "base64", "base32", "basenc", "zstd",
                             "zstdcat", "unzstd"))
# Compressors that, with `-d` and no `-c`, write each operand's name without its suffix (`gzip -d x.sh.gz`: x.sh)
_COMPRESSORS = frozenset(("gzip", "bzip2", "xz", "zstd", "lz4", "lzma", "brotli"))
_AWK_OUTPUT = re.compile(r'printf?\b[^;}\n]*?>>?\s*(?:"([^"]*)"|(\S))')


def _tool_writes(command: str, words: list[str], index: int) -> list[str]:
    """The files the command ``command`` writes as its word ``words[index]`` says: sort's and curl's ``-o``
    (``--output``), wget's ``-O`` (``--output-document``) and a URL's last part (curl ``-O``, wget), sed's ``w``
    file (``w x``, ``s/a/b/w x``), awk's ``print > "x"``; :data:`_ANY_FILE` for an unpacker (``tar``, ``unzip``,
    ``split``, ``patch``...) and awk's ``print > $1``."""
    word = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if command in _OPERAND_WRITERS and os.path.basename(word).lower() == command:
        return _later_operands(words, index + 1, _OPERAND_WRITERS[command])
    if command in _OUTPUT_WRITERS:
        short, long = ("-O", "--output-document") if command == "wget" else ("-o", "--output")
        if word in (short, long):
            return [following]
        if word.startswith(long + "="):
            return [word.partition("=")[2]]
        if word.startswith(short) and len(word) > 2:
            return [word[2:]]
        if command in ("curl", "wget") and "://" in word:
            return [word.split("?")[0].split("#")[0]]
    if command in _COMPRESSORS and os.path.basename(word).lower() == command:
        end = next((n for n in range(index + 1, len(words)) if set(words[n]) <= SEPARATOR), len(words))
        flags = [other for other in words[index + 1:end] if other[:1] == "-" and other != "-"]
        decompresses = any(other in ("--decompress", "--uncompress") or other[1:2] != "-" and "d" in other
                           for other in flags)
        to_stdout = any(other in ("--stdout", "--to-stdout") or other[1:2] != "-" and "c" in other for other in flags)
        return [_ANY_FILE] if decompresses and not to_stdout else []
    elif command in _UNPACKERS and os.path.basename(word).lower() == command:
        end = next((n for n in range(index + 1, len(words)) if set(words[n]) <= SEPARATOR), len(words))
        extracts = command not in ("tar", "gtar", "bsdtar") or any(  # tar: `-x`, `xf`, `--extract`, `--get`
            other in ("--extract", "--get") or re.fullmatch(r"-?[A-Za-z]*x[A-Za-z]*", other) and
            (other[:1] == "-" or n == index + 1) for n, other in enumerate(words[index + 1:end], index + 1))
        return [_ANY_FILE] if extracts else []
    elif command in ("sed", "gsed") and os.path.basename(word).lower() != command:
        return [match.strip() for match in re.findall(r"(?:^|[^A-Za-z\\])[wW][ \t]*([^\n]+)", word)]
    elif command in AWKS and os.path.basename(word).lower() != command:
        return [match[0] or _ANY_FILE for match in _AWK_OUTPUT.findall(word)
                if match[0] or match[1] not in "\"("]
    return []


def _later_operands(words: list[str], start: int, valued: frozenset[str]) -> list[str]:
    """The operands of the command whose words start at ``words[start]`` (up to a ``;``, ``&`` or ``|``) past its
    first, options and their values aside; all of them where the first is no plain word (``xxd $(find ...) out``:
    the substitution's words are not known to be one operand)."""
    operands: list[str] = []
    plain = True
    index = start
    while index < len(words) and not (words[index] and set(words[index]) <= set(";&|")):
        word = words[index]
        index += 1
        if word in valued:
            index += 1
        elif word[:1] == "-" and word != "-" or word in OUTPUT_REDIRECTS or word in ("<", "(", ")"):
            index += word in OUTPUT_REDIRECTS or word == "<"
        else:
            if not operands and ("$" in word or "`" in word):
                plain = False
            operands.append(word)
    return operands[1:] if plain else operands


_HERE_DOCUMENT = re.compile(r"(?<![<\\])<<(?!<)(-?)[ \t]*([^\s;&|()<>]+)")


def check_here_documents(text: str) -> None:
    """:class:`Unread` where the shell command ``text`` feeds an unquoted here-document holding a command
    substitution (``$(...)``, backticks: the shell runs it first, its output becomes the text) to a command that
    runs code it reads (:func:`reads_code`: ``bash <<EOF`` / ``bash $(find ...)``). A quoted one (``<<'EOF'``)
    is text, read as the command's words. Each body is found by its lines' index (one pass over the text)."""
    if "<<" not in text or ("$(" not in text and "`" not in text):
        return

    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    substituted = [0]  # the lines before each that hold a substitution
    ends: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})  # where each line (tabs stripped) is
    for index, line in enumerate(lines):
        substituted.append(substituted[-1] + ("$(" in line or "`" in line))
        ends[0].setdefault(line, []).append(index)
        ends[1].setdefault(line.lstrip("\t"), []).append(index)
    for match in _HERE_DOCUMENT.finditer(text):
        if any(quote in match[2] for quote in "'\"\\"):
            continue
        first = bisect.bisect_right(starts, match.start())  # the line after the operator's
        found = ends[bool(match[1])].get(match[2], [])
        last = next(iter(found[bisect.bisect_right(found, first - 1):]), len(lines))
        if substituted[last] == substituted[min(first, last)]:
            continue
        begin = max(text.rfind(char, 0, match.start()) for char in ";&|(\n") + 1
        end = min([at for at in (text.find(char, match.end()) for char in ";&|)\n") if at >= 0] or [len(text)])
        words = shell_words(text[begin:match.start()] + " " + text[match.end():end], 2)
        at = next((n for n, word in enumerate(words) if not ASSIGNMENT.fullmatch(word) and word[:1] != "-"
                   and not _DURATION.fullmatch(word) and os.path.basename(word).lower() not in WRAPPERS), None)
        if at is not None and reads_code(words, at):  # the command fed, past `VAR=x`, `env`, `nice -n 5`
            raise Unread("a here-document's command substitution is run before the code it feeds, which CodeAct "
                         "does not read")


class _CommandReader:
    """:func:`check_commands`' reading of one command, a word at a time."""

    def __init__(self, root: str, cwd: str, plugin: bool, own: set[str], depth: int) -> None:
        self.root, self.cwd, self.plugin, self.own, self.depth = root, cwd, plugin, own, depth
        self.start, self.piped, self.skip = True, False, False  # at a command's place; reading a pipe
        self.wrapper = ""  # after a wrapper (`env`, `nice`): the short options that take a value
        self.interp = ""  # the interpreter whose script comes next (`-c`: a shell's text)
        self.stack: list[tuple[bool, str, bool]] = []
        self.words: list[str] = []
        self.written: frozenset[str] = frozenset()  # the names of the files the command writes (_written)
        self.at = 0  # the word read now: words[at]
        self.pipe_open = 0  # the compound commands open that read a pipe (`| while ...; do`), nested ones too
        self.changed: frozenset[str] = frozenset()  # the variables it sets, but for its loops (set_names)
        self.here = 0  # after `<<`: 1, its delimiter next; 2, its body (if any) next
        self.case = 0  # in a `case` statement: 1, its subject; 2, a pattern; 3, a pattern's commands
        self.case_piped = False  # the `case` statement reads a pipe: each pattern's commands do

    def unknown(self, word: str) -> bool:
        return _unknown(word, self.own, self.root, self.cwd, self.plugin, self.changed)

    def generated(self, word: str, script: bool = True) -> None:
        """:class:`Unread` where the script ``word`` is one the command writes itself (any script a path names,
        after a command that writes files its words do not name: ``tar -x``, ``unzip``; a ``script`` an
        interpreter runs, or a command word holding a ``/``), or lies in a temporary folder (another command's,
        another hook's): what it runs is what was written there."""
        name = os.path.basename(word.rstrip("/"))
        if (name and name in self.written) or (_ANY_FILE in self.written and (script or "/" in word)) or \
                word.startswith(_TEMPORARY):
            raise Unread(f"it runs {word!r}, a script the hook writes or a temporary one, which CodeAct does not read")

    def nested(self, text: str) -> None:
        if self.depth < 2:
            inner = assigned(shell_words(text, 2), self.plugin)
            check_commands(inner, self.root, self.cwd, self.plugin, self.own | own_names(inner), self.depth + 1,
                            self.written)

    def here_document(self, word: str) -> bool:
        """Whether ``word`` is a here-document's delimiter or body (:func:`shell_words` writes a body as one word
        ending in a newline after its delimiter), read here: a shell's body (``bash <<'EOF'``) as its commands,
        another's command substitutions (``cat <<EOF`` / ``$(...)``) as commands."""
        if word in ("<<", "<<-"):
            self.here = 1
            return True
        if self.here == 1:
            self.here = 2
            return True
        self.here = 0
        if not word.endswith("\n"):
            return False
        if self.interp in SHELL_NAMES:  # `bash <<'EOF'`: its script
            self.nested(word)
        else:
            for inner in substitutions(word):
                self.nested(inner)
        return True

    def case_pattern(self, word: str) -> bool:
        """Whether ``word`` is a ``case`` statement's subject or pattern (``case $t in bash|shell) ...;; esac``:
        ``bash|shell`` is no pipe), read as no command."""
        if self.case == 0:
            if word == "case" and self.start:
                self.case, self.case_piped, self.start = 1, self.piped or self.pipe_open > 0, False
                return True
            return False
        if self.case == 1:  # the subject (a substitution's commands read), then `in`
            self.case = 2 if word == "in" else 1
            return word == "in"
        if self.case == 2:  # a pattern, to its `)`
            if word == "esac":
                self.case = 0
                self.start = False
            elif word and set(word) <= SEPARATOR and word.endswith(")"):
                self.case, self.start, self.interp, self.piped = 3, True, "", self.case_piped or self.pipe_open > 0
            return True
        if word in (";;", ";&", ";;&", "esac"):  # the end of a pattern's commands: the next pattern, or the end
            self.case = 2 if word != "esac" else 0
            self.start = self.start and word != "esac"
            return True
        return False

    def read(self, word: str) -> None:
        if self.here_document(word) or self.case_pattern(word):
            return
        if word and (set(word) <= SEPARATOR or word in ("<(", ">(")):  # `;`, `&&`, `|`, `|&`, `(`, `);`...
            self.separator(word)
        elif self.skip:
            self.skip = False
        elif word in OUTPUT_REDIRECTS or word in ("<", "<<<", "<>", ">&", "<&"):
            self.skip = not (self.interp and word in ("<", "<<<"))  # `sh < x`: its script is the file read
        elif self.start:
            self.command(word)
        elif self.interp:
            self.argument(word)

    def separator(self, word: str) -> None:
        if word in ("<(", ">(") and (self.start or self.interp):
            raise Unread(f"{self.interp or 'a command'} runs what a process substitution prints, {_UNKNOWN}")
        for char in "(" if word in ("<(", ">(") else word:
            if char == "(":  # a subshell reading a pipe: each of its commands reads it (`| (read a; sh)`)
                opened = self.piped or self.pipe_open > 0 or word == ">("
                self.stack.append((self.piped, self.interp, opened))
                self.pipe_open += opened
                self.start, self.interp = True, ""
            elif char == ")":
                self.piped, self.interp, opened = self.stack.pop() if self.stack else (False, "", False)
                self.pipe_open -= opened
                self.start = False
            else:
                self.start, self.interp = True, ""
        # a pipe's reader: the command after `|`, each command of a compound one there (`| { read a; sh; }`,
        # `| while read l; do ...; done`) and of a process substitution written to (`tee >(sh)`)
        self.piped = word in ("|", "|&", ">(") or (self.piped and word == "(") or self.pipe_open > 0
        self.wrapper, self.skip = "", False

    def command(self, word: str) -> None:
        wrapper = self.wrapper
        if ASSIGNMENT.fullmatch(word) or (wrapper and (word[:1] == "-" or _DURATION.fullmatch(word))):
            self.skip = bool(wrapper) and len(word) == 2 and word[0] == "-" and word[1] in wrapper  # `nice -n 5`
            return
        if self.unknown(word):
            raise Unread(f"the command {word!r} is what the command's own output or reading sets, {_UNKNOWN}")
        self.start, self.wrapper = False, ""
        if any(space in word for space in " \t\n"):  # `eval "bash $f"`: a command's text
            self.nested(word)
            return
        name = os.path.basename(word).lower()
        if (self.piped or self.pipe_open) and word in COMPOUND_OPEN:
            self.pipe_open += 1
        elif self.pipe_open and word in COMPOUND_CLOSE:
            self.pipe_open -= 1
        elif self.piped and word not in KEYWORDS and reads_code(self.words, self.at):
            raise Unread(f"a command piped into {word} may run what it reads there, which CodeAct does not read; "
                         "pipe into a known data tool or a script named by its path")
        if name not in KEYWORDS:
            self.generated(word, script=False)
        if name in WRAPPERS or name in KEYWORDS:
            self.start, self.wrapper = True, WRAPPERS.get(name, "") or " "  # its options and their values next
            return
        runs_code = name in RUNS_CODE or bool(PYTHON.fullmatch(name))
        self.interp = name if runs_code or name in ("source", ".") else \
            "npx" if name in NPXS else "npm" if name in NPMS else ""

    def npx(self, word: str) -> None:
        """npx's (``npm exec``'s) options: ``-c TEXT``, ``--call TEXT``, ``--call=TEXT``, a shell command's text."""
        key, equals, value = word.partition("=")
        if self.interp == "npm":  # `npm exec`, `npm x`: npx
            self.interp = "npx" if word in ("exec", "x") else "npm" if word.startswith("-") else ""
        elif key in ("-c", "--call"):
            self.interp = "" if equals else "-c"
            if equals:
                self.nested(value)
        elif word in ("-p", "--package"):  # `npx -p pkg -c 'text'`: a value
            self.skip = True
        elif not word.startswith("-"):
            self.interp = ""

    def argument(self, word: str) -> None:
        if self.interp in ("npx", "npm"):
            self.npx(word)
        elif self.interp == "-c":  # a shell's `-c` text: a command of its own
            self.nested(word)
            self.interp = ""
        elif word in ("-o", "+o", "-O", "+O"):  # `bash -o pipefail`: a value, not the script
            self.skip = True
        elif word.startswith("-"):
            if self.interp in SHELL_NAMES and not word.startswith("--") and "c" in word[1:]:  # `sh -ec 'text'`
                self.interp = "-c"
            elif word.lower() in ("--eval", "--print", "-command") or (word[1:2] != "-" and set("cep") & set(word)):
                self.interp, self.skip = "", True  # `python3 -c`, `node -pe`, `perl -ne`: another language's code
        elif self.unknown(word):
            raise Unread(f"{self.interp} runs {word!r}, what the command's own output or reading sets, {_UNKNOWN}")
        else:
            self.generated(word)
            self.interp = ""


def _segments(words: list[str]) -> list[tuple[int, int, bool]]:
    """Each simple command of ``words`` as ``(start, end, piped)``: the words between separators, and whether a
    pipe (or a process substitution written to) is its stdin."""
    found: list[tuple[int, int, bool]] = []
    start, piped = 0, False
    for index, word in enumerate([*words, ";"]):
        if word and (set(word) <= SEPARATOR or word in ("<(", ">(")):
            if index > start:
                found.append((start, index, piped))
            start, piped = index + 1, word in ("|", "|&", ">(") or (piped and word == "(")
    return found


def _command_at(words: list[str], start: int, end: int) -> int:
    """The index of the command word of the simple command ``words[start:end]``: past assignments, keywords and
    wrappers' options (``env X=1 cp``: ``env``); ``end`` where there is none."""
    index = start
    while index < end and (ASSIGNMENT.fullmatch(words[index]) or words[index] in KEYWORDS
                           or words[index] in COMPOUND_OPEN or words[index] in COMPOUND_CLOSE):
        index += 1
    return index


def _script_runs(words: list[str], segments: list[tuple[int, int, bool]]) -> dict[int, int]:
    """The scripts ``words`` runs, as ``{index: segment}``: an interpreter's script (``bash build/run.sh``: the first
    word past its options) and a command word that is a path or ends in a script suffix (``./build/run.sh``)."""
    runs: dict[int, int] = {}
    for number, (start, end, _) in enumerate(segments):
        at = _command_at(words, start, end)
        if at >= end:
            continue
        name = os.path.basename(words[at].replace("\\", "/")).lower()
        if name in INTERPRETERS:
            script = next((n for n in range(at + 1, end) if words[n][:1] not in "-+<>&"
                           and words[n - 1] not in OUTPUT_REDIRECTS and words[n - 1] not in ("<", "<<<")), None)
            if script is not None:
                runs[script] = number
        elif "/" in words[at].replace("\\", "/") or name.endswith(SCRIPT_SUFFIXES):
            runs[at] = number
    return runs


def _operands(words: list[str], end: int, at: int) -> list[tuple[int, str]]:
    """The words of the simple command ending at ``end`` (its command word at ``at``) that may name a file:
    each word past the command but options (an option's value after ``=``, a short one's joined value:
    ``--output=x``, ``of=x``, ``-ox``), redirection operators and separators."""
    found: list[tuple[int, str]] = []
    for index in range(at + 1, end):
        word = words[index]
        if not word or word in OUTPUT_REDIRECTS or word in ("<", "<<<", "<>", ">&", "<&") or word.isdigit():
            continue
        if "=" in word:
            found.append((index, word.partition("=")[2]))
        elif word[:1] == "-" and word[1:2] != "-" and len(word) > 2:
            found.append((index, word[2:]))
        elif word[:1] != "-" and word != "+x":
            found.append((index, word))
    return found


def copied_sources(words: list[str], root: str, cwd: str, plugin: bool, depth: int = 0) -> list[str]:
    """The files a script the shell command ``words`` runs may be copied from, as paths to protect (``cp -r
    parts/. build/ && bash build/run.sh``: ``./parts/.`` and every file below it), and :class:`Unread` where that script is
    written by a command whose sources are not known. A script run (:func:`_script_runs`) is written by another
    command of ``words`` (not known to write nothing: :data:`READ_ONLY`) where one of that command's words names
    it or a folder above it (``uniq - build/run.sh``, ``cp -rT parts build``, ``ln -sfn parts build``, ``xargs cp
    -t build``, ``git diff --output=build/run.sh``); for a command other than a copier (:data:`COPIERS`, whose
    destination may be the folder itself: ``cp -r parts/. .``) a word naming the folder it runs in or one above
    it does not count (``npx eslint . && ./scripts/x.sh``); a shell's ``-c`` text and ``eval``'s are read the same
    way (``depth``: two levels). A copier given its sources as words gives them (a link
    made by ``ln``: from the link's folder too); any other writer, a copier reading a pipe, run by xargs, given
    stdin, a substitution or a source outside the tree (or not known here) makes the hooks file Unread. A copier's
    destination is followed whatever reads it: any word of another command naming it or a path below it
    (:func:`_named_paths`: ``timeout 5 bash build/run.sh``, ``make -C build``, ``python3 -m build.run``, ``for f in
    build/*.sh``, ``bash -c 'bash build/run.sh'``) protects its sources the same way, as does any word at all after
    a copy into the folder the command runs in (``cp -r parts/. . && make``)."""
    nested = [source for index, word in enumerate(words) if index and depth < 2 and any(
        space in word for space in " \t\n") and (words[index - 1] == "eval" or re.fullmatch(
            r"-[a-z]*c[a-z]*", words[index - 1]) and any(os.path.basename(other).lower() in SHELL_NAMES
                                                        for other in words[max(0, index - 4):index]))
              for source in copied_sources(assigned(shell_words(word, 2), plugin), root, cwd, plugin, depth + 1)]
    segments = _segments(words)
    runs = _script_runs(words, segments)
    copies = any(os.path.basename(word).lower() in COPIERS for word in words)
    if not runs and not copies:
        return nested
    bases = command_bases(words, root, cwd, plugin)

    def resolved(text: str) -> list[str] | None:
        expanded = expand_word(text, root, cwd, plugin) if "`" not in text and "$(" not in text else None
        if expanded is None:
            return None
        return [os.path.normpath(os.path.join(base, expanded)) for base in bases]

    scripts = [(index, paths) for index in runs if (paths := resolved(words[index])) is not None]
    named = _named_paths(words, resolved) if copies else []
    found: list[str] = nested
    for number, (start, end, piped) in enumerate(segments):
        at = _command_at(words, start, end)
        if at >= end or os.path.basename(words[at]).lower() in READ_ONLY:
            continue
        copier = any(os.path.basename(word).lower() in COPIERS for word in words[at:end])
        operands = [(index, text) for index, text in _operands(words, end, at) if runs.get(index) is None]
        for index, text in operands:
            written = resolved(text)
            if written is None:
                if copier and text[:1] != "-" and runs:  # `cp -r parts/. "$OUT"`: a destination not known here
                    raise Unread(f"{words[at]} writes to {text!r}, a folder not known here, while the hook runs "
                                 "a script; name the folder as a path")
                continue
            if not copier:
                written = [path for path in written if path not in bases and not root.startswith(path)]
            hit = next((words[run] for run, paths in scripts if runs[run] != number and any(
                script == path or script.startswith(path.rstrip("/") + "/") or
                (set(path) & _GLOB_CHARS and fnmatch.fnmatchcase(script, path + "*")) for script in paths
                for path in written)), None)
            if hit is None and copier:  # any other word naming the destination or below: what reads it is not known
                hit = next((word for at_word, word, paths in named if not start <= at_word < end and any(
                    given == path or given.startswith(path.rstrip("/") + "/") for given in paths
                    for path in written)), None)
            if hit is None:
                continue
            unknown = piped or not copier or any(
                os.path.basename(word).lower() in ("xargs", "gxargs", "parallel") or from_stdin(word) or
                "$(" in word or "`" in word or word in ("<(", "<<", "<<<") for word in words[start:end])
            if unknown:
                raise Unread(f"it runs {hit!r}, which {words[at]} writes from what CodeAct does not read")
            found += _sources(words, operands, index, words[at], root, cwd, plugin, bases)
    return found


_GLOB_CHARS = frozenset("*?[")
_MODULE = re.compile(r"\w+(?:\.\w+)+")  # `python3 -m build.run`: build/run


def _named_paths(words: list[str], resolved: Callable[[str], list[str] | None]) -> list[tuple[int, str, list[str]]]:
    """Each path a word of ``words`` may name, as ``(index, word, paths)``, for a copier's destination: the word, an
    option's value (``--prefix=build``, ``-Cbuild``), a dotted module read as folders (``build.run``), and the words
    of a word holding spaces (``bash -c 'bash build/run.sh'``); separators and operators aside. Whatever runs it,
    behind whatever wrapper or runner (``timeout 5 bash build/run.sh``, ``make -C build``, ``for f in build/*``)."""
    found: list[tuple[int, str, list[str]]] = []
    for index, word in enumerate(words):
        if not word or set(word) <= SEPARATOR or word in OUTPUT_REDIRECTS:
            continue
        given = [word]
        if "=" in word:
            given.append(word.partition("=")[2])
        if word[:1] == "-" and word[1:2] != "-" and len(word) > 2:
            given.append(word[2:])
        if _MODULE.fullmatch(word):
            given.append(word.replace(".", "/"))
        if any(space in word for space in " \t\n"):
            given += [inner for inner in shell_words(word, 2) if inner and not set(inner) <= SEPARATOR]
        paths = [path for text in given if text and text[:1] != "-" and (found_paths := resolved(text)) is not None
                 for path in found_paths]
        if paths:
            found.append((index, word, paths))
    return found


def _sources(words: list[str], operands: list[tuple[int, str]], destination: int, command: str, root: str,
             cwd: str, plugin: bool, bases: list[str]) -> list[str]:
    """A copier's sources (its operands but the ``destination`` one and the command words), each with every file
    below it, as absolute paths from each of ``bases``: :class:`Unread` for one not known here or outside the tree (``/tmp/parts``, ``~/x``)."""
    found: list[str] = []
    link = os.path.basename(command).lower() in ("ln", "gln")
    for index, text in operands:
        if index == destination or os.path.basename(text).lower() in COPIERS or text in WRAPPERS or \
                words[index][:1] == "-" and "=" not in words[index]:
            continue
        expanded = expand_word(text, root, cwd, plugin)
        if expanded is None:
            expanded = as_pattern(text, root, cwd, plugin)
        if expanded is None or (os.path.isabs(expanded) and not os.path.normpath(expanded).startswith(
                root.rstrip(os.sep) + os.sep)):
            raise Unread(f"{command} copies {text!r}, which CodeAct does not protect, into a script the hook runs")
        texts = [expanded]
        if link and not os.path.isabs(expanded):  # a link's text is read from the link's folder
            texts.append(os.path.join(os.path.dirname(words[destination].rstrip("/")), expanded))
        found += [form for given in texts for base in bases  # from each folder the command may run in
                  for form in (os.path.normpath(os.path.join(base, given)), os.path.join(base, given, "**"))]
    return found


# PowerShell's (and cmd's) commands that read a pipe as data, lower case, aliases too: an allowlist, as a POSIX
# shell's pipe readers are (:data:`STDIN_DATA`, besides which a data tool, a script file an interpreter is given
# or one of the repository named by its path is read as :func:`reads_code` reads it)
_PS_DATA = frozenset((
    "convertfrom-json", "convertto-json", "convertfrom-csv", "convertto-csv", "convertfrom-stringdata",
    "select-object", "select", "where-object", "where", "?", "sort-object", "sort", "measure-object", "measure",
    "group-object", "group", "get-unique", "gu", "select-string", "sls", "compare-object", "compare", "diff",
    "format-table", "ft", "format-list", "fl", "format-wide", "fw", "out-string", "out-null", "out-host", "oh",
    "out-default", "out-file", "set-content", "sc", "add-content", "ac", "tee-object", "tee", "write-output",
    "write", "echo", "write-host", "get-content", "gc", "type", "test-path", "get-item", "gi", "get-childitem",
    "gci", "ls", "dir", "resolve-path", "rvpa", "split-path", "join-path", "join-string", "get-member", "gm",
    "get-filehash", "exit", "findstr", "more", "find"))
# What runs the code a pipe, or any word, gives it: Invoke-Expression, Invoke-Command, a script block made of text,
# Start-Process (its FilePath from the pipe), Add-Type (C# compiled and loaded), and a call of what a variable or
# an expression holds (`& $c`, `. (...)`)
_PS_RUNS = frozenset(("invoke-expression", "iex", "invoke-command", "icm", "start-job", "sajb", "start-threadjob",
                      "add-type"))
_PS_STARTS = frozenset(("start-process", "saps", "start", "invoke-item", "ii"))  # piped: the pipe names what runs
_PS_CALLED = re.compile(r"(?:^|[\s;|({])[&.]\s*(?:\$[\w:{}]+(?=\s|$|\))|\()")  # `& $c`, `. $c`, `& (...)`: what an expression gives


# Invoke-Expression of a script file's text named by its path (the template's own hooks file does so): the file
# is named, and protected, as a script an interpreter runs is
_PS_RUNS_FILE = re.compile(
    r"(?i)(?:invoke-expression|iex)\s+(?:-command\s+)?\(\s*(?:get-content|gc)\s+(?:-raw\s+)?"
    r"(?:-(?:literalpath|lp|path)\s+)?(['\"]?)(?=[^\s'\"()]*[/\\])([^\s'\"()$*?\[\]`;|&]+\.ps1)\1(?:\s+-raw)?\s*\)")


def _windows_pipes(text: str) -> list[str]:
    """The commands of a PowerShell or cmd command ``text``, split on its unquoted ``|``, ``;``, ``&&``, ``||``, a
    line's end and braces (``{ ... }`` a script block's commands, each its own)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "|;\n{}":
            parts.append("".join(current))
            current = ["|" if char == "|" else ""]
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def check_windows_pipes(text: str) -> None:
    """:class:`Unread` where the PowerShell or cmd command ``text`` runs code it reads or makes: a command of
    :data:`_PS_RUNS` anywhere (``Invoke-Expression``, ``iex``, ``[scriptblock]::Create``,
    ``$ExecutionContext.InvokeCommand.InvokeScript``, ``[powershell]::Create().AddScript``, ``& $c``), ``Start-Process``
    reading a pipe, or a pipe into a command not known to read it as data (:data:`_PS_DATA`; else as
    :func:`reads_code` reads a POSIX shell's reader: ``| python -``, ``| bash``, ``| node``; ``| python x.py``
    is data)."""
    if any(name in text.lower() for name in ("scriptblock", "invokescript", "addscript", "invokecommand")):
        raise Unread("it makes a script block of text (or runs one), which CodeAct does not read")
    for part in _windows_pipes(text):
        piped = part.startswith("|")
        words = [word.strip("'\"()`").replace("\\", "/") for word in part.lstrip("|").split()]
        words = [word for word in words if word]
        if not words:
            continue
        at = 0
        while at < len(words) and words[at] in ("&", ".") and at + 1 < len(words) and words[at + 1][:1] != "$":
            at += 1  # `& python x.py`: the call operator before a name
        first = words[at]
        name = os.path.basename(first).lower().rsplit("\\", 1)[-1]
        name = name.split("\\")[-1].rpartition("/")[2]
        if _PS_CALLED.search(part.lstrip("|")):
            raise Unread(f"it calls what an expression gives ({part.strip()!r}), which CodeAct does not read")
        runs = next((word for word in words if os.path.basename(word).lower() in _PS_RUNS), None)
        if runs is not None and not piped and _PS_RUNS_FILE.fullmatch(part.strip()):
            continue  # `Invoke-Expression (Get-Content -Raw -LiteralPath x/y.ps1)`: a script file, protected by its name
        if runs is not None or (piped and name in _PS_STARTS):
            raise Unread(f"{runs or first} runs code it is given or reads, which CodeAct does not read")
        if piped and name not in _PS_DATA and reads_code([first, *words[at + 1:]], 0):
            raise Unread(f"a command piped into {first} may run what it reads there, which CodeAct does not read; "
                         "pipe into a known data command or a script named by its path")
