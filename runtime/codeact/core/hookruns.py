"""What a repository's hook files run: the paths inside the repository that their commands name.

The Copilot CLI runs the commands of ``.github/hooks/**/*.json`` and the inline hooks of ``.github/copilot/settings*.json``
and ``.claude/settings*.json`` on the host, at every tool call for ``preToolUse``. Those files are protected by name
(:mod:`codeact.core.boundary`); the scripts their commands run are ordinary files unless the boundary refuses them too,
from what this module reads: each entry's ``bash``, ``command``, ``linux``, ``osx`` (a POSIX shell's words),
``powershell``, ``windows`` (PowerShell's or cmd's words), ``exec`` (a native executable: one word) and ``args``, and
its ``env`` values (a runner may run one: make's ``$(CC)``), resolved against its ``cwd`` (relative to the
repository root). A plugin's hooks files (its manifest's ``hooks``, ``hooks.json``, ``hooks/hooks.json``) are read
the same way, ``plugin=True``: from the plugin's folder, with ``${CLAUDE_PLUGIN_ROOT}`` and ``${COPILOT_PLUGIN_ROOT}``
read as that folder. A word names a path when it holds ``/`` or ``\\``, ends in a script suffix, follows an interpreter
(``bash x``, ``python3 x``, ``pwsh -File x``), or, a bare word otherwise, when such a file exists. A runner's first
file is named too (``python -m a.b``: ``a/b.py``; ``make``: the Makefile; ``npm run x``: ``package.json``); what the
files named import or run in turn is not read (the repository's own code).

Reading is bounded (:data:`MAX_HOOKS_BYTES` a file, :data:`MAX_COMMAND_CHARS` a command, :data:`MAX_WORDS` and
:data:`MAX_ENTRIES` a file) and fails closed: a file past a bound raises :class:`Unread` (which scripts it runs is not
known; the boundary refuses the writes it governs), and reading stops at the run's deadline with :class:`Stopped`.
What was read is cached by the file's identity and change time.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import fnmatch
import itertools
import json
import os
import re
from typing import NamedTuple

from . import pyimports
from .beneath import read_regular_within
from .patterns import compile_narrow
from .winnames import windows_name

MAX_HOOKS_BYTES = 1 << 20  # what is read of one hooks or settings file; a larger one is Unread
MAX_COMMAND_CHARS = 16 << 10  # one command's text (a hook command is a line); a longer one makes its file Unread
MAX_WORDS = 10_000  # words split of one file's commands, all entries together; past it the file is Unread
MAX_BASES = 16  # folder changes (`cd`) read of one command; its words are read from at most 8x as many folders
MAX_HOOKS_FILES = 64  # *.json files (and folders) read of one .github/hooks tree (the program cannot add one: HOOKS_RULE)
MAX_ENTRIES = 1_000  # command entries read of one file; past it the file is Unread
MAX_NODES = 20_000  # JSON values walked of one file, looking for entries; past it the file is Unread
MAX_DEPTH = 12  # how deep entries are looked for (the CLI's, VS Code's and Claude's shapes are 3 to 5 deep)

SHELL_KEYS = ("bash", "command", "linux", "osx")  # run by sh/bash: split as a POSIX shell splits
WINDOWS_KEYS = ("powershell", "windows", "command")  # PowerShell's or cmd's: split on white space (`command` runs on
# every platform, so it is read both ways)
SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".fish", ".ps1", ".psm1", ".psd1", ".py", ".pyw", ".pyz", ".js",
                   ".mjs", ".cjs", ".ts", ".mts", ".cts", ".rb", ".pl", ".php", ".lua", ".bat", ".cmd", ".jar",
                   ".exe")
# Words after which the next plain word is a script the command runs, whether that file exists or not.
INTERPRETERS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "python", "python3", "py",
                          "pythonw", "node", "deno", "bun", "tsx", "ts-node", "ruby", "perl", "php", "lua", "pwsh",
                          "powershell", "pwsh.exe", "powershell.exe", "-file", "cmd", "cmd.exe", "call"))
_SHELL_NAMES = ("sh", "bash", "zsh", "dash", "ksh", "fish", "mksh", "ash", "busybox")  # POSIX shells: `-c` text
_CHANGE_DIR = frozenset(("cd", "pushd", "chdir", "set-location", "sl", "push-location"))
_OUTPUT_REDIRECTS = frozenset((">", ">>", ">|", "&>", "&>>"))
_PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "COPILOT_PROJECT_DIR")
_PLUGIN_VARS = ("CLAUDE_PLUGIN_ROOT", "COPILOT_PLUGIN_ROOT", "PLUGIN_ROOT")  # the CLI sets all three
# Runners that read a file of the folder they run in first (`python -m a.b`: a/b.py; `make`: the Makefile; `npm run
# x`: package.json): that file is protected like a script the hook names. What it imports or runs in turn is not.
_PYTHON = re.compile(r"(?:python[0-9.]*w?|py)(?:\.exe)?")
_MAKES = frozenset(("make", "gmake", "make.exe", "gmake.exe", "mingw32-make", "mingw32-make.exe"))
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # those make reads, the first found
_NPMS = frozenset(("npm", "npm.cmd", "npm.exe"))
_NPM_SCRIPTS = frozenset(("run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart", "install",
                          "i", "ci", "install-test", "it", "install-ci-test", "cit"))  # read package.json's scripts
_PACKAGE_RUNNERS = frozenset(("pnpm", "yarn", "bun", "pnpm.cmd", "yarn.cmd", "bun.exe"))  # `yarn lint`: a script
_RUNNER_DIRS = frozenset(("-c", "--directory", "--prefix", "--dir", "--cwd"))  # an option naming the folder run in
_MAKE_FILES = frozenset(("-f", "--file", "--makefile"))
_SEPARATOR = frozenset(";&|()")
_WORKSPACES = frozenset(("-w", "--workspace", "--filter"))  # npm's workspace, pnpm's filter: its package.json
# npm's --workspaces (-ws), pnpm's --recursive (-r): every workspace's package.json (`*/package.json`)
_EVERY_WORKSPACE = frozenset(("--workspaces", "-ws", "--ws", "--recursive"))
# npm's (pnpm's, yarn's, bun's) commands that install: the lifecycle scripts of every workspace package and every
# local `file:` dependency run, so every package.json below is read as theirs
_INSTALLS = frozenset(("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "isntall", "add",
                       "ci", "clean-install", "ic", "install-clean", "isntall-clean", "install-test", "it",
                       "install-ci-test", "cit", "update", "up", "upgrade", "udpate", "rebuild", "rb", "link", "ln",
                       "remove", "rm", "r", "un", "uninstall", "unlink", "prune", "dedupe", "ddp", "import",
                       "approve-builds", "patch-commit", "upgrade-interactive", "unplug", "trust"))
# Beside each package.json an install reads: what it installs from (lockfiles, a tarball a `file:` spec or a lockfile
# names) and node-gyp's files (npm's default install script for a package with binding.gyp: `node-gyp rebuild`, and
# gyp runs a `<!(cmd)` of the file while reading it; config.gypi and common.gypi of the folder are included)
_INSTALL_FILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb",
                  "binding.gyp", "config.gypi", "common.gypi", "*.tgz", "*.tar", "*.tar.gz")
# What a package manager loads at every command, wherever in the repository (pnpm: the workspace's root; yarn: every
# folder up): pnpm's .pnpmfile.cjs hooks and pnpm-workspace.yaml settings, yarn's .yarnrc `yarn-path` and
# .yarnrc.yml `yarnPath` (the JavaScript yarn hands the command to), its plugins and PnP loaders, bun's bunfig.toml
_MANAGER_FILES = {"pnpm": (".pnpmfile.cjs", ".pnpmfile.mjs", "pnpm-workspace.yaml"),
                  "yarn": (".yarnrc", ".yarnrc.yml", ".yarn/releases/**", ".yarn/plugins/**", ".pnp.cjs", ".pnp.js",
                           ".pnp.loader.mjs"),
                  "bun": ("bunfig.toml",)}
_INSTALL = "\x00install"  # :func:`_options`' mark of an install
_MAKE_VALUED = "CfIoWjlO"  # make's short flags that take a value (j, l, O: only joined)
_VALUED = frozenset((*_RUNNER_DIRS, *_MAKE_FILES, *_WORKSPACES))  # a make or npm option that takes the next word
_LONG_OPTIONS = tuple(name for name in _VALUED if name.startswith("--"))
# Command substitutions that name the repository's top or the cwd (`"$(git rev-parse --show-toplevel)/x.sh"`,
# `$(pwd)/x.sh`), read as the variables that name them; nothing nested inside.
_TOP_SUBST = re.compile(r"\$\(\s*git\s+rev-parse\s+--show-toplevel\b[^()`]*\)"
                        r"|`\s*git\s+rev-parse\s+--show-toplevel\b[^()`]*`")
_PWD_SUBST = re.compile(r"\$\(\s*(?:pwd|[Gg]et-[Ll]ocation)\b[^()`]*\)|`\s*pwd\b[^()`]*`")
# A variable as a POSIX shell, PowerShell or cmd writes it: `${D}` or `${D:-x}`, `$env:D`, `$D`, `%D%`
_VARIABLE = re.compile(r"\$\{(\w+)(?::?[-=][^{}]*)?\}|\$env:(\w+)|\$(\w+)|%(\w+)%")
_TRIMMED = re.compile(r"\$\{(\w+)(%%|%|##|#)([^{}]*)\}")  # `${D%/}`: a value's end or start removed
# `D=impl`, a shell variable's assignment; `D+=impl` appends (an unset name is just set), `D[0]=x` an array's item
_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)(?:\[[^]]*\])?(\+?)=(.*)", re.DOTALL)
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
_GLOB = frozenset("*?[")


class Unread(Exception):
    """A hooks file past what is read of one: the message says which bound. Which scripts it runs is not known."""


class Stopped(Exception):
    """The run's deadline passed while a hooks file was read; ``timeout`` is the run's time limit in seconds."""

    def __init__(self, timeout: float) -> None:
        super().__init__(timeout)
        self.timeout = timeout


class _Budget:
    """The work left to read one hooks file: :data:`MAX_WORDS` words, and the run's deadline (when in a run)."""

    __slots__ = ("deadline", "read", "words")

    def __init__(self) -> None:
        from .limits import Deadline

        self.deadline = Deadline.current()
        self.words = 0
        self.read = False  # a file of the repository was read too (a package.json's main): not cached

    def spend(self, words: int = 1) -> None:
        """Count ``words`` more: :class:`Unread` past :data:`MAX_WORDS`, :class:`Stopped` past the deadline."""
        self.words += words
        if self.words > MAX_WORDS:
            raise Unread(f"more than {MAX_WORDS:,} words of commands")
        if self.deadline is not None and self.deadline.expired():
            raise Stopped(self.deadline.timeout)


class Target(NamedTuple):
    """A path a hook command names: ``path`` absolute and normalised, ``key`` as :func:`fold` writes it (an
    ``fnmatch`` pattern when ``glob``); ``named`` is False for a bare word that is a path only where it exists;
    ``fresh``: a file there now is one only where :func:`codeact.core.pyimports.shadows` says so."""

    path: str
    key: str
    named: bool
    glob: bool
    fresh: bool = False  # a Python start's surface (pyimports.SURFACE): refused where new, or the stdlib's name


def fold(path: str) -> str:
    """``path`` (absolute, normalised) with each part as Windows reads it (case-folded): the form targets compare in."""
    return "/".join(windows_name(part) for part in path.replace("\\", "/").split("/"))


def hook_targets(file: str, root: str, top: str | None, *, plugin: bool = False) -> tuple[Target, ...] | None:
    """The paths inside ``root`` (a repository's top, or with ``plugin`` a plugin's folder) that the hooks file
    ``file`` runs, or None where it is not read: missing, not a regular file, or (``top`` given) a file whose real
    path lies outside ``top`` (a link leading out is never followed: what lies outside must not decide a write's
    answer). A file that is not JSON names nothing. :class:`Unread` where the file is past a bound (over
    :data:`MAX_HOOKS_BYTES`, see :func:`targets_in`), :class:`Stopped` at the run's deadline."""
    read = read_regular_within(file, top, MAX_HOOKS_BYTES)
    if read is None:
        return None
    data, info = read
    if len(data) > MAX_HOOKS_BYTES:
        raise Unread(f"over {MAX_HOOKS_BYTES >> 20} MiB")
    signature = (file, root, plugin, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    cached = _CACHE.get(file)
    if cached is not None and cached[0] == signature:
        if isinstance(cached[1], str):
            raise Unread(cached[1])
        return cached[1]
    if len(_CACHE) >= 256:
        _CACHE.clear()
    budget = _Budget()
    try:
        found = targets_of(data, root, plugin=plugin, budget=budget, hook_dir=os.path.dirname(file))
    except Unread as exc:  # kept as read: the next write is refused without reading it again
        _CACHE[file] = (signature, str(exc))
        raise
    if not budget.read:  # what depends on another file (a package.json's main) is read again each time
        _CACHE[file] = (signature, found)
    return found


_CACHE: dict[str, tuple[tuple[object, ...], tuple[Target, ...] | str]] = {}


def targets_of(data: bytes, root: str, *, plugin: bool = False, budget: _Budget | None = None,
               hook_dir: str | None = None) -> tuple[Target, ...]:
    """The targets the hooks JSON ``data`` names, resolved in the repository ``root`` (or the plugin's folder, see
    :func:`targets_in`); none if it is not JSON (a leading byte-order mark is skipped), :class:`Unread` if it nests
    deeper than Python's reader goes."""
    import json

    try:
        parsed = json.loads(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    except ValueError:  # no JSON the CLI reads either
        return ()
    except RecursionError:  # JSON nested deeper than Python's reader goes, which Node's (the CLI's) reads
        raise Unread("JSON nested deeper than CodeAct reads") from None
    return targets_in(parsed, root, plugin=plugin, budget=budget, hook_dir=hook_dir)


def targets_in(parsed: object, root: str, *, plugin: bool = False, budget: _Budget | None = None,
               hook_dir: str | None = None) -> tuple[Target, ...]:
    """The targets the parsed hooks ``parsed`` names inside ``root``, each entry read from its ``cwd`` (relative to
    ``root``). ``plugin``: ``root`` is a plugin's folder, which ``${CLAUDE_PLUGIN_ROOT}`` and
    ``${COPILOT_PLUGIN_ROOT}`` name; the project's variables then name nothing known here (the session's folder).
    ``hook_dir``: the folder of the hooks file, which ``$COPILOT_HOOK_DIR`` names (the CLI sets it)."""
    budget = budget or _Budget()
    given = _hook_dir_value(hook_dir, root, plugin)
    found: dict[Target, None] = {}
    for entry in _entries(parsed):
        budget.spend(0)
        cwd = entry.get("cwd")
        base = os.path.normpath(os.path.join(root, cwd)) if isinstance(cwd, str) and "\x00" not in cwd else root
        env = entry.get("env")
        runner_env = {name: value if isinstance(value, str) else json.dumps(value) for name, value in env.items()
                      if isinstance(name, str)} if isinstance(env, dict) else {}  # a number as Node passes it
        for name in runner_env:
            _check_variable(name)
        for command in _entry_words(entry, root, base, plugin, budget, runner_env, given):
            for target in _named(command, root, base, plugin, budget, runner_env):
                found[target] = None
    return tuple(found)


def _hook_dir_value(hook_dir: str | None, root: str, plugin: bool) -> dict[str, str]:
    """``{"COPILOT_HOOK_DIR": ...}``: the hooks file's folder as a word (from the root's variable where inside it,
    read after splitting), where it holds no character a shell reads otherwise; else nothing (not known)."""
    if hook_dir is None:
        return {}
    rel = os.path.relpath(hook_dir, root)
    value = hook_dir if rel.startswith("..") else \
        "${" + (_PLUGIN_VARS[1] if plugin else _PROJECT_VARS[1]) + "}" + ("" if rel == "." else "/" + rel)
    return {"COPILOT_HOOK_DIR": value} if re.fullmatch(r"[\w./${}:\\-]+", value) else {}


def _entry_words(entry: dict[str, object], root: str, base: str, plugin: bool, budget: _Budget,
                 runner_env: dict[str, str], given: dict[str, str] | None = None) -> list[list[str]]:
    """The commands of one hooks ``entry``, each as its words: its shell and PowerShell keys, ``command`` (or
    ``exec``) with ``args``, and each value of its ``env`` (:class:`Unread` where one is past a bound or runs
    what its own output sets, :func:`_check_commands`). ``given``: the variables the CLI sets (its own win)."""
    env: object = entry.get("env")
    if given:
        env = {**(env if isinstance(env, dict) else {}), **given}
    words: list[list[str]] = []
    for keys, split in ((SHELL_KEYS, shell_words), (WINDOWS_KEYS, windows_words)):
        for key in keys:
            text = entry.get(key)
            if isinstance(text, str):
                if len(text) > MAX_COMMAND_CHARS:
                    raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB")
                substituted = _substituted(text, env, plugin)
                if split is shell_words:
                    _check_expansions(text)
                    _check_here_documents(text)
                    _check_node_stdin(substituted)
                    _check_commands(_assigned(shell_words(substituted, 2), plugin), root, base, plugin)
                if split is windows_words:  # awk's, sed's program, as PowerShell's quotes keep it whole
                    _check_filters(shell_words(substituted, 2))
                split_words = split(substituted, budget=budget)
                words.append(_assigned(split_words, plugin, nested=True) if split is shell_words else split_words)
    args = entry.get("args")
    strings = [arg for arg in args if isinstance(arg, str)] if isinstance(args, list) else []
    command_text = entry.get("command")
    if isinstance(args, list):
        budget.spend(len(args))
        if any(len(arg) > MAX_COMMAND_CHARS for arg in strings):
            raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB")
        words.append(strings)
        if isinstance(command_text, str):  # `{"command": "make", "args": ["-C", "x"]}`: one command
            budget.spend(len(strings))
            words.append([*shell_words(command_text, budget=budget), *strings])
            _check_commands([*shell_words(command_text, 2), *strings], root, base, plugin)
    program = _program(entry.get("exec"), budget)
    if program:  # the CLI's `exec`: a native executable (no shell), then `args`
        words.append([*program, *strings])
    if strings and (isinstance(command_text, str) or program):  # `sh` + ["-c", "python3 -m x"]
        words.append(_nested(strings, 0, budget))
    budget.spend(len(runner_env))
    for value in runner_env.values():  # `"env": {"CC": "impl/cc"}`: make, a script, runs the value
        if len(value) > MAX_COMMAND_CHARS:
            raise Unread(f"an env value over {MAX_COMMAND_CHARS >> 10} KiB")
        words.append(_nested([value], 0, budget))
    return words


def _program(value: object, budget: _Budget) -> list[str]:
    """The words of an entry's ``exec`` (a string: one word, the executable; a list: its strings)."""
    program = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
        if isinstance(value, list) else []
    budget.spend(len(program))
    if any(len(word) > MAX_COMMAND_CHARS for word in program):
        raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB")
    return program


def _check_expansions(text: str) -> None:
    """:class:`Unread` where the shell command ``text`` holds a ``${...}`` this module does not apply (``${D/x/y}``,
    ``${D:0:4}``, ``${!D}``, nested ones): what the word names is not known, so its file fails closed."""
    at = text.find("${")
    while at >= 0:
        if not (_VARIABLE.match(text, at) or _TRIMMED.match(text, at)):
            end = text.find("}", at)
            form = text[at:end + 1 if 0 <= end < at + 40 else at + 40]
            raise Unread(f"a parameter expansion CodeAct does not read: {form}")
        at = text.find("${", at + 2)


# Text filters whose program may run a command (`awk '{system("sh " $0)}'`, `print "" | c`, `sed '1e'`,
# `sed 's%^%sh %e'`): their own program (the first word after their options, `-e`'s and `--source`'s values) is
# read as the tool reads it, and one that can run a command makes the hooks file Unread (a plain
# `awk '{print $1 "|" $2}'` stays data, and so does a later command's `|`); one read from stdin or a descriptor
# (`-f /dev/fd/3`, `-f -`) is not known. A program file (`-f x.awk`) is protected like a script.
_AWKS = frozenset(("awk", "gawk", "mawk", "nawk"))
_FILTERS = _AWKS | {"sed", "gsed"}
# their long options (as getopt_long reads them, abbreviated too) that take a value: the short option they are
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
def _from_stdin(path: str) -> bool:
    """Whether the program file ``path`` is stdin or another descriptor (``-``, ``/dev/stdin``, ``/dev/fd/3``)."""
    return path in ("-", "<", "<(", "<<", "<<<") or path.startswith(
        ("/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/dev/tty"))


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


def _check_filter(words: list[str], index: int, strict: bool = True) -> None:
    """:class:`Unread` where ``words[index]`` is awk or sed whose program runs commands (:func:`_filter_program`;
    ``words`` as a POSIX shell splits them, no word's own words after it)."""
    name = os.path.basename(words[index]).lower()
    if name in _FILTERS:
        reason = _filter_program(name, words, index + 1, strict)[0]
        if reason:
            raise Unread(reason)


def _check_filters(words: list[str]) -> None:
    """:func:`_check_filter` of each word of a PowerShell command split as a POSIX shell splits it (its quotes
    keep a program whole as a POSIX shell's do; a sed script not parsed is taken not to run one)."""
    for index in range(len(words)):
        _check_filter(words, index, strict=False)


def _filter_option(tool: str, word: str) -> tuple[str, str, bool]:
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


def _filter_program(name: str, words: list[str], start: int, strict: bool = True,
                    nested: bool = False) -> tuple[str, list[str]]:
    """For awk or sed before ``words[start]``: why its program may run a command ("" if it may not), and the
    program files it names (``-f x.awk``). Options are read as the tool reads them: awk's up to its program (the
    first word that is no option), sed's to the command's end (GNU sed takes them after its script too); the
    words :func:`_nested` adds after a word holding spaces are skipped where ``nested``. Not ``strict`` (words
    split on white space too, which cut a program apart): a sed script not parsed is taken not to run one."""
    tool = "awk" if name in _AWKS else "sed"
    programs: list[str] = []
    files: list[str] = []
    positional: list[str] = []
    index, options = start, True

    def take() -> str:  # the next word, past the words _nested added after it (a word holding spaces)
        nonlocal index
        word = words[index] if index < len(words) else ""
        index += 1
        if nested and any(space in word for space in " \t\n"):
            index += len(_nested_words(word))
        return word

    while index < len(words) and index < start + 256:
        word = take()
        if not word or set(word) <= _SEPARATOR:
            break
        flag, value = "", ""
        if word == "--" and options:
            options = False
        elif options and word[:1] == "-" and len(word) > 1:
            flag, value, needs = _filter_option(tool, word)
            value = take() if needs else value
        else:
            positional.append(word)
            if tool == "awk":
                break
        if flag == "e":
            programs.append(value)
        elif flag in ("f", "E") or (flag == "W" and value.startswith("e")):  # mawk's `-W exec file`
            if flag == "W" or _from_stdin(value) or "$(" in value or "`" in value:
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


# Commands that run what they read on stdin, besides shells and interpreters (_RUNS_CODE): ed's and vim's `!cmd`,
# sqlite3's `.shell` (not with `-safe`), gdb's `shell`, m4's `syscmd`, dc's `!`; a pipe or here-document into one
# is not read. make with `-f -` (or `/dev/stdin`) runs the Makefile it reads there.
_STDIN_RUNNERS = frozenset(("ed", "ex", "vi", "vim", "nvim", "view", "rvim", "gvim", "gdb", "lldb", "m4", "dc",
                            "sqlite3", "mysql", "psql", "csh", "tcsh", "yash", "expect", "jshell", "ghci"))
# An interpreter's options that take the next word as their value (a shell's, python's, node's): a word after
# them that is no option is the script it runs; an option not known here leaves that unknown
_SCRIPT_VALUED = {"shell": ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"), "python": ("-W", "-X"),
                  "node": ("-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                           "--env-file", "--title", "--disable-warning")}
_NODE_FLAGS = frozenset(("--no-warnings", "--enable-source-maps", "--trace-warnings", "--trace-uncaught",
                         "--trace-deprecation", "--throw-deprecation", "--no-deprecation", "--pending-deprecation",
                         "--preserve-symlinks", "--preserve-symlinks-main", "--experimental-vm-modules",
                         "--experimental-strip-types", "--no-experimental-fetch", "--abort-on-uncaught-exception"))


def _reads_code(words: list[str], at: int) -> bool:
    """Whether the command ``words[at]``, given a pipe or a here-document as its stdin, runs code it reads there:
    a command of :data:`_STDIN_RUNNERS`, make reading its Makefile from stdin, a shell, python or node with no
    script to run (``| sh``, ``| python3 -``, ``| bash -s``, ``-i``, ``-c``/``-e``/``-m`` code), any other
    interpreter of :data:`_RUNS_CODE`. A shell, python or node given a script file (``| python3 guard.py``) runs
    that file (the hook's own, protected by its name), reading the pipe as data."""
    name = os.path.basename(words[at]).lower()
    end = next((n for n in range(at + 1, min(len(words), at + 64)) if set(words[n]) <= _SEPARATOR), len(words))
    if name in _STDIN_RUNNERS:
        return not (name == "sqlite3" and "-safe" in words[at + 1:end])
    if name in _MAKES:
        return any(key in _MAKE_FILES and _from_stdin(value) for key, value in _options(words, at + 1, True))
    kind = "shell" if name in _SHELL_NAMES else "python" if _PYTHON.fullmatch(name) else \
        "node" if name in ("node", "nodejs", "node.exe") else ""
    if kind == "shell":
        text = _shell_text(words, at + 1, end)
        if text is not None:  # `| bash -c 'text'`: the pipe is data, unless the text's commands read code there
            return _text_reads_code(text)
    if not kind:
        return not _script_given(name, words, at + 1, end) and (name in _RUNS_CODE or name in _SHELLS)
    return _no_script(kind, words, at + 1, end)


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
            return word if text and word[:1] not in "-+<>&" and not set(word) <= _SEPARATOR else None
    return None


def _text_reads_code(text: str) -> bool:
    """Whether a shell's ``-c`` text, given a pipe as its stdin, has a command that runs code read there
    (:func:`_reads_code`: ``bash -c 'sh'``, ``bash -c 'env python3'``) or names stdin (``source /dev/stdin``)."""
    words = shell_words(text, 2)
    if any(_from_stdin(word) for word in words):
        return True
    start = True
    for index, word in enumerate(words):
        if not word or set(word) <= _SEPARATOR or word in _KEYWORDS or word in ("{", "}", "]]", "[["):
            start = True
        elif start and not (_ASSIGNMENT.fullmatch(word) or word[:1] == "-" or _DURATION.fullmatch(word)
                            or os.path.basename(word).lower() in _WRAPPERS):
            start = False
            if _reads_code(words, index):
                return True
    return False


_PERL_FLAGS = {"perl": re.compile(r"-[wWTtlnpas0-9]+"), "ruby": re.compile(r"-[wWnpalsv]+")}
_PWSH = frozenset(("pwsh", "pwsh.exe", "powershell", "powershell.exe"))


def _script_given(name: str, words: list[str], index: int, end: int) -> bool:
    """Whether perl, ruby, ``deno run`` or PowerShell (``name``, its words from ``words[index]``) runs a script
    file it is given (``perl x.pl``, ``deno run -A x.ts``, ``pwsh -NoProfile -File x.ps1``), reading a pipe as
    data; False where it may read its code there or an option is not known here."""
    def script(at: int) -> bool:
        word = words[at] if at < end else ""
        return bool(word) and word[:1] not in "-+<>&" and not set(word) <= _SEPARATOR and not _from_stdin(word)

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
    if name in _PWSH:
        while index < end:
            flag = _flag(words[index])
            index += 1
            if flag in ("-file", "-f"):
                return script(index)
            if flag in ("-executionpolicy", "-ex", "-ep"):
                index += 1
            elif flag not in ("-noprofile", "-nop", "-nologo", "-nol", "-noninteractive", "-noni"):
                return False
    return False


def _no_script(kind: str, words: list[str], index: int, end: int) -> bool:
    """Whether a shell, python or node (``kind``) whose options start at ``words[index]`` runs no script file:
    none is given before ``end``, or it is stdin, or an option reads code (``-s``, ``-i``, ``-c``, ``-m``, ``-e``)
    or is not known here (what it takes is not)."""
    while index < end:
        word = words[index]
        index += 1
        if not word or word[0] in "<>&" or word.isdigit():
            return True  # a redirection between them: its script is not the next word
        if word == "--":
            return index >= end or _from_stdin(words[index])
        if word[:1] not in "-+" or word == "-":
            return _from_stdin(word)  # the script it runs: a file, or stdin again
        if word in _SCRIPT_VALUED[kind]:
            index += 1
        elif kind == "node":
            if "=" not in word and word not in _NODE_FLAGS:  # -e, -p, -i, an option not known here
                return True
        elif not word.startswith("--"):
            letters = word[1:]
            valued = next((n for n, letter in enumerate(letters) if letter in ("oO" if kind == "shell" else "WX")),
                          None)
            if set(letters[:valued]) & set("sic" if kind == "shell" else "cmi"):
                return True  # a shell's `-s`, `-i`, `-c`; python's `-c`, `-m`, `-i`
            index += valued is not None and not (kind == "python" and letters[valued + 1:])  # `-eo x`, `-Wx`
    return True


_RUNS_CODE = frozenset((*_SHELL_NAMES, "pwsh", "pwsh.exe", "powershell", "powershell.exe", "cmd", "cmd.exe", "node",
                        "nodejs", "deno", "bun", "tsx", "ts-node", "perl", "ruby", "irb", "php", "lua", "tclsh",
                        "rscript"))  # with python*: a command that runs the code it reads (awk: its argument)
# Words that leave the next one at a command's place: keywords, and commands that run the command after them
# (their options, durations and the values of the short options named here: `nice -n 5 sh`, `timeout -s KILL 5 sh`)
_KEYWORDS = frozenset(("do", "then", "else", "elif", "if", "while", "until", "!", "{", "coproc"))
_WRAPPERS = {"env": "uC", "nice": "n", "nohup": "", "timeout": "sk", "stdbuf": "ioe", "command": "", "exec": "a",
             "builtin": "", "eval": "", "sudo": "ugCDhprtU", "doas": "uC", "setsid": "", "ionice": "cnp", "chrt": "",
             "caffeinate": "", "unbuffer": "", "time": "fo"}
_DURATION = re.compile(r"[0-9.]+[smhd]?")
_SETS_NAMES = frozenset(("read", "mapfile", "readarray", "for", "select", "getopts"))  # `read -r f`: f
_SPECIAL = re.compile(r"\$\{?(?:[0-9@*#?!$_-]|#)")  # `$1`, `$@`, `${1}`, `$_`: what the command was given or ran


def _own_names(words: list[str]) -> set[str]:
    """The variables a shell command sets from what it reads or runs, whose value is not known here: a loop's
    (``for f in $(find ...)``, ``select``), ``read``'s, ``mapfile``'s, ``getopts``', ``printf -v``'s, and an
    assignment whose value holds a substitution or a variable left unread (``f=$(find ...)``)."""
    names: set[str] = set()
    reading = ""
    for index, word in enumerate(words):
        if word and (set(word) <= _SEPARATOR or word in ("do", "then")):
            reading = ""
            continue
        low = os.path.basename(word).lower()
        if low in _SETS_NAMES:
            reading = low
        elif reading in ("for", "select"):  # its values: the words after `in` (none: "$@"), unknown if one is
            listed = words[index + 1:index + 1 + next((n for n, w in enumerate(words[index + 1:])
                                                       if w in ("do", ";", "\n") or set(w) <= _SEPARATOR), 0)]
            if listed[:1] != ["in"] or any("$" in w or "`" in w for w in listed):  # a literal list is named
                names.add(word)
            reading = ""
        elif reading and not word.startswith("-"):
            names.add(word)
        if word == "-v" and index + 1 < len(words):  # `printf -v f ...`
            names.add(words[index + 1])
        elif word.startswith("-v") and index and words[index - 1] == "printf":  # `printf -vf`
            names.add(word[2:])
        assignment = _ASSIGNMENT.fullmatch(word)
        if assignment and ("$" in assignment[3] or "`" in assignment[3]):
            names.add(assignment[1])
    return names


def _unknown(word: str, own: set[str], root: str, cwd: str, plugin: bool) -> bool:
    """Whether the shell word ``word`` names what a command's own output or reading decides: a command
    substitution (``$(...)``, backticks), a variable of ``own`` (:func:`_own_names`), a positional or special
    parameter (``$1``, ``$@``), ``~-``. A variable of the environment not known here (``$X``) is not."""
    if "`" in word or "$(" in word or word == "$" or word.startswith("~-"):
        return True
    if "$" not in word or _expand(word, root, cwd, plugin) is not None:
        return False
    if any(name in own for match in _VARIABLE.finditer(word) for name in match.groups() if name):
        return True  # `read -r f`'s, a loop's over a substitution: a value that may be anything, `..` too
    if _as_pattern(word, root, cwd, plugin) is not None:  # `scripts/$X.sh`: every file it may be is protected
        return False
    return bool(_SPECIAL.search(word))


_UNKNOWN = "which CodeAct does not read; name the script by its path"


def _check_commands(words: list[str], root: str, cwd: str, plugin: bool, own: set[str] | None = None,
                    depth: int = 0, written: frozenset[str] = frozenset()) -> None:
    """:class:`Unread` where the shell command ``words`` (split once, its own assignments read) runs what its own
    output or reading decides: such a word (:func:`_unknown`: ``for f in $(find ...); do bash $f``, ``find ... |
    while read -r f; do "$f"``, ``$(...)``) or a process substitution at a command's place or as the script an
    interpreter runs (``sh <(find ...)``, ``sh < <(find ...)``); or a command that runs code reading a pipe
    (``find ... | sh``, ``|& sh``), behind a wrapper too (``| env sh``, ``| command sh``, ``| nice -n 5 sh``).
    A shell's ``-c`` text and ``eval``'s are read the same way, two levels deep. And where it runs a script it
    wrote itself (``... > /tmp/h.sh; bash /tmp/h.sh``, :func:`_written`) or one of a temporary folder."""
    reader = _CommandReader(root, cwd, plugin, own if own is not None else _own_names(words), depth)
    reader.words, reader.written = words, written | _written(words)
    for index, word in enumerate(words):
        reader.at = index
        _check_filter(words, index)
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
    dd's ``of=``, and those :func:`_tool_writes` reads (``sort -o``, ``curl -o``, sed's ``w``, awk's ``print >
    "x"``); :data:`_ANY_FILE` where a command writes files its words do not name (``tar -x``, ``unzip``);
    ``/dev/`` files and descriptors aside."""
    found: set[str] = set()
    writer, command = False, ""
    for index, word in enumerate(words):
        if not word or set(word) <= _SEPARATOR:
            writer, command = False, ""
            continue
        if not command and not _ASSIGNMENT.fullmatch(word):
            command = os.path.basename(word).lower()
            command = "" if command in _WRAPPERS else command
        target = ""
        if (word in _OUTPUT_REDIRECTS or word in _FIND_WRITES or word == "<>") and index + 1 < len(words):
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
_AWK_OUTPUT = re.compile(r'printf?\b[^;}\n]*?>>?\s*(?:"([^"]*)"|(\S))')


def _tool_writes(command: str, words: list[str], index: int) -> list[str]:
    """The files the command ``command`` writes as its word ``words[index]`` says: sort's and curl's ``-o``
    (``--output``), wget's ``-O`` (``--output-document``) and a URL's last part (curl ``-O``, wget), sed's ``w``
    file (``w x``, ``s/a/b/w x``), awk's ``print > "x"``; :data:`_ANY_FILE` for an unpacker (``tar``, ``unzip``,
    ``split``, ``patch``...) and awk's ``print > $1``."""
    word = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if command in ("sort", "curl", "wget"):
        short, long = ("-O", "--output-document") if command == "wget" else ("-o", "--output")
        if word in (short, long):
            return [following]
        if word.startswith(long + "="):
            return [word.partition("=")[2]]
        if word.startswith(short) and len(word) > 2:
            return [word[2:]]
        if command != "sort" and "://" in word:
            return [word.split("?")[0].split("#")[0]]
    elif command in _UNPACKERS and os.path.basename(word).lower() == command:
        end = next((n for n in range(index + 1, len(words)) if set(words[n]) <= _SEPARATOR), len(words))
        extracts = command not in ("tar", "gtar", "bsdtar") or any(  # tar: `-x`, `xf`, `--extract`, `--get`
            other in ("--extract", "--get") or re.fullmatch(r"-?[A-Za-z]*x[A-Za-z]*", other) and
            (other[:1] == "-" or n == index + 1) for n, other in enumerate(words[index + 1:end], index + 1))
        return [_ANY_FILE] if extracts else []
    elif command in ("sed", "gsed") and os.path.basename(word).lower() != command:
        return [match.strip() for match in re.findall(r"(?:^|[^A-Za-z\\])[wW][ \t]*([^\n]+)", word)]
    elif command in _AWKS and os.path.basename(word).lower() != command:
        return [match[0] or _ANY_FILE for match in _AWK_OUTPUT.findall(word)
                if match[0] or match[1] not in "\"("]
    return []


_HERE_DOCUMENT = re.compile(r"(?<![<\\])<<(?!<)(-?)[ \t]*([^\s;&|()<>]+)")


def _check_here_documents(text: str) -> None:
    """:class:`Unread` where the shell command ``text`` feeds an unquoted here-document holding a command
    substitution (``$(...)``, backticks: the shell runs it first, its output becomes the text) to a command that
    runs code it reads (:func:`_reads_code`: ``bash <<EOF`` / ``bash $(find ...)``). A quoted one (``<<'EOF'``)
    is text, read as the command's words. Each body is found by its lines' index (one pass over the text)."""
    if "<<" not in text or ("$(" not in text and "`" not in text):
        return
    import bisect

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
        at = next((n for n, word in enumerate(words) if not _ASSIGNMENT.fullmatch(word) and word[:1] != "-"
                   and not _DURATION.fullmatch(word) and os.path.basename(word).lower() not in _WRAPPERS), None)
        if at is not None and _reads_code(words, at):  # the command fed, past `VAR=x`, `env`, `nice -n 5`
            raise Unread("a here-document's command substitution is run before the code it feeds, which CodeAct "
                         "does not read")


class _CommandReader:
    """:func:`_check_commands`' reading of one command, a word at a time."""

    def __init__(self, root: str, cwd: str, plugin: bool, own: set[str], depth: int) -> None:
        self.root, self.cwd, self.plugin, self.own, self.depth = root, cwd, plugin, own, depth
        self.start, self.piped, self.skip = True, False, False  # at a command's place; reading a pipe
        self.wrapper = ""  # after a wrapper (`env`, `nice`): the short options that take a value
        self.interp = ""  # the interpreter whose script comes next (`-c`: a shell's text)
        self.stack: list[tuple[bool, str]] = []
        self.words: list[str] = []
        self.written: frozenset[str] = frozenset()  # the names of the files the command writes (_written)
        self.at = 0  # the word read now: words[at]

    def unknown(self, word: str) -> bool:
        return _unknown(word, self.own, self.root, self.cwd, self.plugin)

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
            inner = _assigned(shell_words(text, 2), self.plugin)
            _check_commands(inner, self.root, self.cwd, self.plugin, self.own | _own_names(inner), self.depth + 1,
                            self.written)

    def read(self, word: str) -> None:
        if word and (set(word) <= _SEPARATOR or word in ("<(", ">(")):  # `;`, `&&`, `|`, `|&`, `(`, `);`...
            self.separator(word)
        elif self.skip:
            self.skip = False
        elif word in _OUTPUT_REDIRECTS or word in ("<", "<<<", "<>", ">&", "<&"):
            self.skip = not (self.interp and word in ("<", "<<<"))  # `sh < x`: its script is the file read
        elif self.start:
            self.command(word)
        elif self.interp:
            self.argument(word)

    def separator(self, word: str) -> None:
        if word in ("<(", ">(") and (self.start or self.interp):
            raise Unread(f"{self.interp or 'a command'} runs what a process substitution prints, {_UNKNOWN}")
        for char in "(" if word in ("<(", ">(") else word:
            if char == "(":
                self.stack.append((self.piped, self.interp))
                self.start, self.interp = True, ""
            elif char == ")":
                self.piped, self.interp = self.stack.pop() if self.stack else (False, "")
                self.start = False
            else:
                self.start, self.interp = True, ""
        self.piped = word in ("|", "|&") or (self.piped and word == "(")
        self.wrapper, self.skip = "", False

    def command(self, word: str) -> None:
        wrapper = self.wrapper
        if _ASSIGNMENT.fullmatch(word) or (wrapper and (word[:1] == "-" or _DURATION.fullmatch(word))):
            self.skip = bool(wrapper) and len(word) == 2 and word[0] == "-" and word[1] in wrapper  # `nice -n 5`
            return
        if self.unknown(word):
            raise Unread(f"the command {word!r} is what the command's own output or reading sets, {_UNKNOWN}")
        self.start, self.wrapper = False, ""
        if any(space in word for space in " \t\n"):  # `eval "bash $f"`: a command's text
            self.nested(word)
            return
        name = os.path.basename(word).lower()
        if name not in _KEYWORDS:
            self.generated(word, script=False)
        if name in _WRAPPERS or name in _KEYWORDS:
            self.start, self.wrapper = True, _WRAPPERS.get(name, "") or " "  # its options and their values next
            return
        runs_code = name in _RUNS_CODE or bool(_PYTHON.fullmatch(name))
        if self.piped and _reads_code(self.words, self.at):
            raise Unread(f"a command piped into {word} runs what CodeAct does not read")
        self.interp = name if runs_code or name in ("source", ".") else \
            "npx" if name in _NPXS else "npm" if name in _NPMS else ""

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
            if self.interp in _SHELL_NAMES and not word.startswith("--") and "c" in word[1:]:  # `sh -ec 'text'`
                self.interp = "-c"
            elif word.lower() in ("--eval", "--print", "-command") or (word[1:2] != "-" and set("cep") & set(word)):
                self.interp, self.skip = "", True  # `python3 -c`, `node -pe`, `perl -ne`: another language's code
        elif self.unknown(word):
            raise Unread(f"{self.interp} runs {word!r}, what the command's own output or reading sets, {_UNKNOWN}")
        else:
            self.generated(word)
            self.interp = ""


def _trimmed(match: re.Match[str], values: dict[str, str]) -> str:
    """bash's ``${D%pattern}``, ``${D%%pattern}``, ``${D#pattern}``, ``${D##pattern}`` of a value in ``values``
    (the shortest or longest end or start the pattern matches removed); as written where ``D`` is not there."""
    value = values.get(match[1])
    if value is None:
        return match[0]
    operation, pattern = match[2], match[3]
    regex = _glob(pattern)
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
    the shell's words do not hold: an unquoted ``$(...)`` (shlex splits it as ``$`` then ``(``), backticks."""
    return "`" in value or (value.endswith("$") and after[:1] != [] and after[0].startswith("("))


def _assigned(words: list[str], plugin: bool, nested: bool = False) -> list[str]:
    """A shell command's ``words`` with the variables it assigns itself (``D=impl; sh "$D/run.sh"``, ``export
    D=impl``) read in the words after the assignment, and a value holding white space read as its words too
    (``x='cd impl'; $x``); :class:`Unread` where they grow the command past :data:`MAX_COMMAND_CHARS` (not those
    hookruns sets itself). ``nested``: a quoted word's words follow it (:func:`_nested`), no assignments."""
    if not any("=" in word for word in words):
        return words
    own = (*(_PLUGIN_VARS if plugin else _PROJECT_VARS), "PWD")
    values: dict[str, str] = {}
    size = sum(map(len, words))
    out: list[str] = []

    def value_of(match: re.Match[str]) -> str:
        nonlocal size
        name = next(group for group in match.groups() if group)
        found = values.get(name)
        if found is None:
            return match[0]
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
        given = word
        inside -= 1
        outer = inside < 0
        if nested and outer and any(space in word for space in " \t\n"):
            inside = len(_nested_words(word))
        if values and "$" in word:
            word = _VARIABLE.sub(value_of, _TRIMMED.sub(trimmed, word))
        assignment = _ASSIGNMENT.fullmatch(word)
        if assignment and assignment[1] not in own and outer:
            if _from_substitution(assignment[3], words[at + 1:at + 2]):  # `T=$(jq ...)` split as `T=$`, `(`, ...:
                values.pop(assignment[1], None)  # what the command prints, not known (:func:`_own_names`)
            else:
                values[assignment[1]] = values.get(assignment[1], "") * bool(assignment[2]) + assignment[3]
        out.append(word)
        if word != given and any(space in word for space in " \t\n"):  # `x='cd impl'; $x`, `eval "$x"`: its
            out += shell_words(word, 2)  # words, as a quoted word's are read (`_nested`)
    return out


def _entries(data: object) -> list[dict[str, object]]:
    """The command entries of a hooks file, whatever its shape: every object with a command key (``bash``,
    ``powershell``, ``command``, ``exec``...), and those inside it (a matcher group's ``hooks``), within
    :data:`MAX_DEPTH`; :class:`Unread` past :data:`MAX_ENTRIES` entries or
    :data:`MAX_NODES` values."""
    keys = (*SHELL_KEYS, *WINDOWS_KEYS, "exec")
    found: list[dict[str, object]] = []
    stack: list[tuple[object, int]] = [(data, 0)]
    walked = 0
    while stack:
        if walked >= MAX_NODES:
            raise Unread(f"more than {MAX_NODES:,} values")
        value, depth = stack.pop()
        walked += 1
        if isinstance(value, dict):
            if any(isinstance(value.get(key), str) for key in keys) or isinstance(value.get("args"), list) \
                    or isinstance(value.get("exec"), list):
                found.append(value)
                if len(found) > MAX_ENTRIES:
                    raise Unread(f"more than {MAX_ENTRIES:,} entries")
            # an entry's children too: the CLI runs a group's inner `hooks`, ignoring the group's own `bash`
            children: list[object] = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth < MAX_DEPTH:
            stack.extend((child, depth + 1) for child in reversed(children) if isinstance(child, (dict, list)))
    return found


def shell_words(text: str, depth: int = 0, *, budget: _Budget | None = None) -> list[str]:
    """The words of a POSIX shell command (quotes removed; ``;``, ``&&``, ``|``, redirections apart); a quoted word
    holding spaces (``sh -c '...'``) is split once more. Unbalanced quotes: split on white space, quotes
    trimmed. Each word is counted against ``budget``."""
    import shlex

    budget = budget or _Budget()
    words: list[str] = []
    try:
        text = _EXTGLOB.sub("*", _joined_lines(text))  # `impl/\<newline>run.sh`; `impl/@(run).sh`: a pattern
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
    return _nested(words, depth, budget)


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
    """``text`` with bash's line continuations removed: a backslash before a newline, outside single quotes."""
    if "\\\n" not in text:
        return text
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            quote = "" if char == "'" else quote
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


def _trimmed_word(word: str) -> str:
    """``word`` with :data:`_TRIM` taken from its ends, but the ``}`` that closes a ``${...}`` kept (``"${X}"`` is
    ``${X}``, not ``${X``, which no variable is)."""
    trimmed = word.strip(_TRIM)
    if "${" in trimmed and trimmed.rfind("}") < trimmed.rfind("${") and "}" in word[word.find(trimmed) + len(trimmed):]:
        trimmed += "}"
    return trimmed


def windows_words(text: str, depth: int = 0, *, budget: _Budget | None = None) -> list[str]:
    """The words of a PowerShell or cmd command: split on white space, quotes and ``;(){}&|,`` trimmed from their
    ends, ``\\`` read as ``/``. Counted against ``budget``."""
    budget = budget or _Budget()
    raw = text.split()
    words = [_trimmed_word(word).replace("\\", "/") for word in raw]
    more = [_UNESCAPED.sub(r"\1", word) for word in words if "`" in word or "^" in word]  # `r`un.ps1`, r^un.bat
    more += [_FORMAT_ITEM.sub("**", word) for word in words if _FORMAT_ITEM.search(word)]  # `'x/{0}.ps1' -f 'run'`
    more += _joined_paths(raw)
    words += more
    budget.spend(len(words))
    return _nested([word for word in words if word], depth, budget)


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


def _nested(words: list[str], depth: int, budget: _Budget) -> list[str]:
    if depth >= 2:
        return words
    out: list[str] = []
    for word in words:
        out.append(word)
        if any(space in word for space in " \t\n"):
            out += _nested_words(word, depth, budget)
    return out


def _nested_words(word: str, depth: int = 0, budget: _Budget | None = None) -> list[str]:
    """The words :func:`_nested` adds after ``word`` (which holds white space): its shell and PowerShell words, and
    an option's value's too (npx's ``--call="cd impl && bash run.sh"``, nopt's ``--key=value``)."""
    out = shell_words(word, depth + 1, budget=budget) + windows_words(word, depth + 1, budget=budget)
    key, equals, value = word.partition("=")
    if equals and key[:1] == "-" and not any(space in key for space in " \t\n"):
        out += shell_words(value, depth + 1, budget=budget) + windows_words(value, depth + 1, budget=budget)
    return out


# Variables that make a shell or runner read (or run) a file before, or instead of, what the command names: set
# by a hook entry's ``env`` or a command's ``VAR=`` word, they make the hooks file Unread (which file is not
# followed). PATH, HOME and the loaders' too: the repository's folder in them makes `python3` or a profile its file.
UNFOLLOWED_VARIABLES = re.compile(
    r"(?i:BASH_ENV|ENV|ZDOTDIR|HOME|PATH|CDPATH|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|"
    r"LD_\w+|DYLD_\w+|NODE_OPTIONS|NODE_PATH|NODE_EXTRA_CA_CERTS|npm_config_(?!prefix$)\w+|"
    r"PYTHONSTARTUP|PYTHONHOME|PYTHONUSERBASE|PYTHONEXECUTABLE|PYTHONPLATLIBDIR|PIP_\w+|UV_\w+|VIRTUAL_ENV|"
    r"PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|GEM_\w+|BUNDLE_\w+|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|"
    r"CLASSPATH|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|GIT_\w+|BASH_FUNC_\S+|PYTHONWARNINGS|PYTHONPATH_\w+|OLDPWD|"
    r"XDG_CONFIG_HOME|XDG_DATA_HOME|PSModulePath|COREPACK_\w+|YARN_\w+|BUN_\w+|DENO_\w+)")


# Commands that run what they find or decode, which the words do not name: a hooks file using them is Unread.
_ENCODED = {"-e", "-ec", "-en", "-enc", "-enco", "-encod", "-encode", "-encoded", "-encodedc", "-encodedco",
            "-encodedcom", "-encodedcomm", "-encodedcomma", "-encodedcomman", "-encodedcommand"}
_FIND_RUNS = {"-exec", "-execdir", "-ok", "-okdir"}
_FD_RUNS = {"-x", "--exec", "-X", "--exec-batch"}
_INDIRECT: dict[str, set[str] | None] = {  # a command, and the options that make it so (None: any use)
    "find": _FIND_RUNS, "gfind": _FIND_RUNS, "busybox": _FIND_RUNS, "fd": _FD_RUNS, "fdfind": _FD_RUNS,
    "xargs": None, "parallel": None, "foreach-object": None, "%": None, "foreach": None, "run-parts": None,
    **{shell: _ENCODED for shell in ("pwsh", "pwsh.exe", "powershell", "powershell.exe")}}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "pwsh", "powershell", "python", "python3", "node",
                     "perl", "ruby", "source", "."})


# PowerShell's environment variables: `$env:X`, `${env:X}`, `Env:X` (`Set-Item -Path Env:X`), and .NET's setter
_ENV_NAME = re.compile(r"(?i)^(?:\$\{?)?env:[\\/]?(\w+)|SetEnvironmentVariable\(\s*['\"]?(\w+)")
_SETTERS = frozenset({"export", "declare", "typeset", "readonly", "local", "read", "-v", "-x", "-gx"})


def _imports_a_category(words: list[str], at: int) -> bool:
    """Whether ``words[at]`` holds Python's ``-W`` (``-W action::module.Category``, ``-Waction::module.Category``,
    or joined to other short flags as CPython reads them: ``-bW x``, ``-bWx``) whose category lies in a module:
    Python imports it at start, from its path (the script's folder first)."""
    word = words[at]
    if not word.startswith("-") or word.startswith("--"):
        return False
    for index, flag in enumerate(word[1:], 1):
        if flag in "cmX":  # the rest of the word (or the next) is their value: no more flags
            return False
        if flag == "W":
            rest = word[index + 1:]
            value = rest or (words[at + 1] if at + 1 < len(words) else "")
            return "." in (value.split(":") + ["", "", ""])[2]
    return False


def _flag(word: str) -> str:
    """A word as an option is compared: lower case, one leading ``-`` for any run of dashes or ``/`` (PowerShell
    takes ``--EncodedCommand``, ``/EncodedCommand`` and en or em dashes alike)."""
    low = word.lower()
    stripped = low.lstrip("-/\u2013\u2014\u2015")
    return "-" + stripped if stripped != low else low


def _program_files(name: str, words: list[str], start: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """For a search tool or text filter before ``words[start]``: :class:`Unread` where it runs commands CodeAct
    does not read (:func:`_finder_runs`, :func:`_filter_program`); the program files it names (``awk -f x``)."""
    reason = _finder_runs(name, words, start)
    programs: list[str] = []
    if name in _FILTERS and not reason:  # strict in _check_commands, of a POSIX shell's words
        reason, programs = _filter_program(name, words, start, strict=False, nested=True)
    if reason:
        raise Unread(reason)
    return [file for given in programs if (file := _expand(given, root, cwd, plugin)) is not None]


def _finder_runs(name: str, words: list[str], start: int) -> str:
    """Why a search tool at ``words[start - 1]`` runs a command on each file it finds ("" if it does not):
    ripgrep's ``--pre COMMAND``, ``git grep``'s ``-O<pager>`` and ``--open-files-in-pager[=<pager>]``
    (abbreviated too), read up to the command's end or ``--``."""
    if name in ("rg", "rg.exe"):
        if any(word == "--pre" or word.startswith("--pre=") for word in words[start:]):
            return "rg --pre runs a command on each file it searches, which CodeAct does not read"
        return ""
    if name not in ("git", "git.exe"):
        return ""
    index = start
    while index < len(words) and words[index].startswith("-"):  # git's own options
        index += 1 + (words[index] in _GIT_VALUED)
    if index >= len(words) or words[index].lower() != "grep":
        return ""
    for word in words[index + 1:]:
        if word == "--" or (word and set(word) <= _SEPARATOR):
            break
        key = word.partition("=")[0]
        letters = word[1:] if word[:1] == "-" and word[1:2] != "-" else ""
        pager = next((letter == "O" for letter in letters if letter in "OefABCm"), False)  # -lObash, not -eO
        if pager or (len(key) >= 4 and "--open-files-in-pager".startswith(key)):
            return "git grep -O runs a pager on the files it finds, which CodeAct does not read"
    return ""


def _check_variable(name: str) -> None:
    """:class:`Unread` for a variable of a hook entry or command that makes what it runs read another file."""
    if UNFOLLOWED_VARIABLES.fullmatch(name):
        raise Unread(f"it sets {name}, which makes the command read a file CodeAct does not follow")


def _named(words: list[str], root: str, cwd: str, plugin: bool = False, budget: _Budget | None = None,
           env: dict[str, str] | None = None) -> list[Target]:
    """The targets inside ``root`` that the command ``words``, run in ``cwd``, names."""
    bases = _bases(words, root, cwd, plugin)
    loops = _literal_loops(words)
    found: list[Target] = []
    script_next = redirected = changes_dir = node_next = False
    for index, word in enumerate(words):
        if budget is not None and not index % 64:  # the run's deadline, between words
            budget.spend(0)
        low = word.lower()
        if redirected:  # `> log.txt`: written, not run
            redirected = False
            continue
        if low in _OUTPUT_REDIRECTS:
            redirected = True
            continue
        follows, is_dir, node = script_next, changes_dir, node_next
        changes_dir = low in _CHANGE_DIR
        # `pwsh -NoProfile -File x.ps1`: options between an interpreter and its script keep it expected
        script_next = low in INTERPRETERS or os.path.basename(low) in INTERPRETERS or (follows and low[:1] == "-")
        # `node -r x impl/main`: every word after node, to the command's end, is resolved as require does
        node_next = os.path.basename(low) in _NODE_RUNNERS or (node and not set(low) <= _SEPARATOR)
        if changes_dir or is_dir:
            continue
        for text in _word_texts(word, loops, root, cwd, plugin):
            if node and not text.startswith("-") and (text.strip("./\\") == "" or any(c.isalnum() for c in text)):
                # `node impl/check`, `node .`: impl/check.js, ./index.js... as require resolves them
                for candidate in _node_files(text, bases, root, budget):
                    found += _targets(candidate, True, bases, root)
            if text.startswith("-") or not any(char.isalnum() for char in text):  # `&&`, `[`, `!`, `;`
                continue
            named = follows or "/" in text or text.lower().endswith(SCRIPT_SUFFIXES)
            found += _targets(text, named, bases, root)
            if named and not follows and "*" not in text and _runs_python(text, bases, root):  # `./check.py`
                for file in _import_files(os.path.dirname(text), text, None, root, bases, budget):
                    found += _targets(file, True, bases, root)
    for text in _runner_files(words, root, cwd, plugin, budget, env):
        found += _targets(text, True, bases, root)
        found += _local_dependencies(text, bases, root, budget)
    return found


_DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
MAX_LOCAL_PACKAGES = 64  # local packages (`file:../x`) followed from one install; past it the hooks file is Unread


def _local_dependencies(text: str, bases: list[str], root: str, budget: _Budget | None) -> list[Target]:
    """For ``text``, an install's ``package-lock.json`` (none other: nothing), what the install in its folder
    (from each of ``bases``) installs from the repository outside that folder: the
    local dependencies its ``package.json`` names (``file:../shared``, ``../shared``, ``link:``, a tarball), and
    theirs in turn, each protected as an install's folder (its ``package.json``, ``binding.gyp``..., whose
    lifecycle scripts run) or tarball. Read each time (not cached); :class:`Unread` past
    :data:`MAX_LOCAL_PACKAGES` packages or for a ``package.json`` over :data:`MAX_HOOKS_BYTES`."""
    if os.path.basename(text) != _INSTALL_FILES[0] or _GLOB & set(text):
        return []
    pending = [os.path.normpath(os.path.join(base, os.path.dirname(text))) for base in bases]
    seen: set[str] = set()
    found: list[Target] = []
    while pending:
        here = pending.pop()
        if here in seen:
            continue
        seen.add(here)
        if len(seen) > MAX_LOCAL_PACKAGES:
            raise Unread(f"an install of more than {MAX_LOCAL_PACKAGES} local packages")
        if budget is not None:
            budget.read = True
        read = read_regular_within(os.path.join(here, "package.json"), os.path.realpath(root), MAX_HOOKS_BYTES)
        if read is None:
            continue
        if len(read[0]) > MAX_HOOKS_BYTES:
            raise Unread(f"a package.json an install reads over {MAX_HOOKS_BYTES >> 20} MiB")
        try:
            data = json.loads(read[0].decode("utf-8", errors="replace").removeprefix("\ufeff"))
        except (ValueError, RecursionError):  # npm refuses it too
            continue
        specs = [spec for key in _DEPENDENCY_KEYS if isinstance(data, dict) and isinstance(data.get(key), dict)
                 for spec in data[key].values() if isinstance(spec, str)]
        for spec in specs:
            local = spec[5:] if spec.lower().startswith("link:") else _folder_spec(spec)
            if local is None or local.startswith(("$", "~")):
                continue
            path = os.path.normpath(os.path.join(here, local))
            if local.lower().endswith((".tgz", ".tar.gz", ".tar")):
                found += _targets(path, True, [here], root)
                continue
            found += [target for file in ("package.json", *_INSTALL_FILES) if "*" not in file
                      for target in _targets(os.path.join(path, file), True, [here], root)]
            pending.append(path)
    return found


def _word_texts(word: str, loops: dict[str, list[str]], root: str, cwd: str, plugin: bool) -> list[str]:
    """The paths a word may stand for: once per value of a literal loop's variable it holds (``for t in a b; do
    bash impl/$t.sh``), its known variables expanded, others read as a pattern (:func:`_as_pattern`); and an
    option's or assignment's value after ``=`` (``--config=./x.py``, ``VAR=./x.sh``)."""
    texts: list[str] = []
    variants = _loop_values(word, loops)
    variants += [part for variant in variants if any(c.isspace() for c in variant) for part in variant.split()]
    for variant in variants or [word]:  # a value with spaces: the words an unquoted one splits into too
        expanded = _expand(variant, root, cwd, plugin)
        if expanded is None:
            expanded = _as_pattern(variant, root, cwd, plugin)
        if expanded is not None:
            texts.append(expanded)
            if "=" in expanded:
                texts.append(expanded.split("=", 1)[1])
    return texts


_VARIABLE_PART = re.compile(r"\$\{[^{}]*\}|\$env:\w+|\$\w+|\$[0-9@*#?!$_-]|%\w+%")


def _as_pattern(word: str, root: str, cwd: str, plugin: bool) -> str | None:
    """A path word holding variables not known here as the pattern its known parts make: a variable of the
    environment (``$X``, the user's: taken to stay below the word's folder) read as ``**`` (any text, ``/`` too):
    ``scripts/$X.sh`` is ``scripts/**.sh``; a positional or special parameter (``$1``, ``$@``: a function's
    argument may hold ``..``), or any variable followed by a ``..``, as ``**`` and the word's last name only
    (``**.sh``, from the folder the command runs in). None where no name is left beside them (``$PYTHON``,
    ``$PWD/$f``)."""
    known = (*(_PLUGIN_VARS if plugin else _PROJECT_VARS), "PWD", "CD")
    if plugin and any(name in word for name in _PROJECT_VARS):  # a plugin's hook: the session's folder, not here
        return None

    def marked(match: re.Match[str]) -> str:
        name = re.sub(r"^[${%]+(?:env:)?|[}%]$", "", match[0]).split(":")[0]
        return match[0] if name in known else "\x02" if _SPECIAL.fullmatch(match[0]) else "\x00"

    if not any(char.isalnum() for char in _VARIABLE_PART.sub("", word)):
        return None
    expanded = _expand(_VARIABLE_PART.sub(marked, word), root, cwd, plugin)
    if expanded is None:
        return None
    tail = re.split(r"[\x00\x02]", expanded)[-1]
    if "\x02" in expanded or ".." in re.split(r"[/\\]", tail):  # may climb anywhere: the last name only
        return "**" + re.split(r"[/\\]", tail)[-1]
    return expanded.replace("\x00/", "\x00").replace("\x00", "**")


def _literal_loops(words: list[str]) -> dict[str, list[str]]:
    """The variables of the command's loops over a literal list (``for t in lint run; do``) and their values."""
    loops: dict[str, list[str]] = {}
    for index, word in enumerate(words[:-2]):
        if word == "for" and words[index + 2] == "in" and words[index + 1].isidentifier():
            values = list(itertools.takewhile(lambda w: w not in ("do", ";", "\n") and not set(w) <= _SEPARATOR,
                                              words[index + 3:index + 3 + MAX_BRACES + 1]))
            if values and len(values) <= MAX_BRACES and not any("$" in w or "`" in w or set(w) & _GLOB
                                                                for w in values):
                loops[words[index + 1]] = values
    return loops


def _loop_values(word: str, loops: dict[str, list[str]]) -> list[str]:
    """``word`` once for each value of the literal loops' variables it holds (``impl/$t.sh``: ``impl/lint.sh``,
    ``impl/run.sh``), at most :data:`MAX_BRACES` words; ``[]`` where it holds none."""
    names = [name for name in loops if f"${name}" in word or f"${{{name}}}" in word]
    if not names:
        return []
    found = [word]
    for name in names:
        pattern = re.compile(rf"\$(?:{name}\b|\{{{name}\}})")
        found = [pattern.sub(value.replace("\\", "\\\\"), w) for w in found for value in loops[name]]
        if len(found) > MAX_BRACES:
            return []
    return found


_NODE_RUNNERS = frozenset(("node", "node.exe", "nodejs", "tsx", "ts-node", "ts-node-esm", "deno", "bun", "bun.exe"))
_NODE_SUFFIXES = (".js", ".cjs", ".mjs", ".json", ".node", ".ts", ".mts", ".cts", ".tsx", ".jsx", ".wasm")


def _node_files(text: str, bases: list[str], root: str, budget: _Budget | None) -> list[str]:
    """The files node (``-r``/``--require``/``--import`` too; tsx, ts-node, deno, bun) may run for ``text``, a
    script named without a suffix, as ``require`` resolves it: ``text.*`` (``.js``, ``.cjs``, ``.json``,
    ``.node``, ``.ts``...) and, as a folder, ``text/package.json``, ``text/index.*`` and its ``main``
    (``main``, ``main.*``, ``main/index.*``, read from the ``package.json`` there now, which is protected itself).
    A ``package.json`` over :data:`MAX_HOOKS_BYTES` is :class:`Unread`."""
    if text.lower().endswith(_NODE_SUFFIXES):
        return []
    found = [f"{text}.*", f"{text}/index.*", f"{text}/package.json"]
    for base in bases:
        main = _package_main(os.path.join(base, text, "package.json"), root)
        if main is not None:
            if budget is not None:
                budget.read = True
            where = os.path.normpath(os.path.join(base, text, main))  # absolute: read from any base as itself
            found += [where, f"{where}.*", f"{where}/index.*"]
    return found


_NODE_EVAL = re.compile(r"-[A-Za-z]*[ep]|--eval|--print")  # node's, bun's options whose value is code
_NODE_SPEC = re.compile(r"""["'`]((?:\.{1,2}|)/[^"'`\s]*)["'`]""")  # a literal `./x`, `../x`, `/x`
_NODE_LOADS = re.compile(r"""\b(?:require|import)\s*\(\s*(?!["'`][^"'`$]*["'`]\s*\))|\bchdir\b|createRequire|"""
                         r"""\beval\b|Function\s*\(""")


def _check_node_stdin(text: str) -> None:
    """:class:`Unread` where the shell command ``text`` feeds node (deno, bun, tsx...) its program by a
    here-document or a here-string (``node <<'EOF'``, ``cat <<'EOF' | node``, ``node <<< '...'``): what that
    code requires is not read. node given a script file (``cat <<EOF | node guard.js``) reads it as data."""
    if "<<" not in text:
        return
    for match in re.finditer(r"<<", text):
        begin = max(text.rfind(char, 0, match.start()) for char in ";&(\n") + 1
        end = min([at for at in (text.find(char, match.end()) for char in ";&)\n") if at >= 0] or [len(text)])
        for part in text[begin:end].split("|"):
            words = shell_words(part, 2)
            at = next((n for n, word in enumerate(words) if os.path.basename(word).lower() in _NODE_RUNNERS), None)
            if at is None:
                continue
            name = os.path.basename(words[at]).lower()
            if name not in ("node", "nodejs", "node.exe") or _no_script("node", words, at + 1, len(words)):
                raise Unread(f"{name} reads its program from a here-document or a here-string, which CodeAct "
                             "does not read; put it in a script file")


def _node_code_files(words: list[str], start: int, root: str, cwd: str, plugin: bool,
                     budget: _Budget | None) -> list[str]:
    """The files ``node -e``/``-p``/``--eval``/``--print`` (``deno eval``) code (node's, bun's, deno's words from
    ``words[start]``) requires or imports by a literal path (``./x``, ``../x``), as :func:`_node_files` resolves
    each, relative to the folder node runs in. :class:`Unread` for code that loads what its literals do not say
    (``require(name)``, ``import(x)``, ``process.chdir``, ``createRequire``, ``eval``)."""
    found: list[str] = []
    bases: list[str] | None = None
    for at in range(start, min(len(words), start + 64)):
        word = words[at]
        if word and set(word) <= _SEPARATOR:
            break
        key, equals, value = word.partition("=")
        if word == "eval" and at == start:  # `deno eval "code"`
            key, equals = "--eval", ""
        elif not _NODE_EVAL.fullmatch(key) or (equals and not key.startswith("--")):
            continue
        code = value if equals else (words[at + 1] if at + 1 < len(words) else "")
        if _NODE_LOADS.search(code):
            raise Unread("node's -e/-p code loads a module CodeAct does not read; put it in a script file")
        for spec in _NODE_SPEC.findall(code)[:64]:
            bases = _bases(words, root, cwd, plugin) if bases is None else bases
            found += [spec, *_node_files(spec, bases, root, budget)]
    return found


def _package_main(file: str, root: str) -> str | None:
    """The ``main`` of the ``package.json`` ``file`` (a regular file inside ``root``), or None."""
    read = read_regular_within(file, os.path.realpath(root), MAX_HOOKS_BYTES)
    if read is None:
        return None
    data = read[0]
    if len(data) > MAX_HOOKS_BYTES:
        raise Unread(f"a package.json node runs over {MAX_HOOKS_BYTES >> 20} MiB")
    try:
        main = json.loads(data.decode("utf-8", errors="replace").removeprefix("\ufeff")).get("main")
    except (ValueError, RecursionError, AttributeError):  # no main node reads either
        return None
    return main if isinstance(main, str) and main and "\x00" not in main else None


_NPXS = frozenset(("npx", "npx.cmd", "pnpx", "bunx", "bunx.exe"))
# npm's config as nopt reads it (npm 11, @npmcli/config's definitions): the options that take the next word (a
# String's only where it does not start with `-x`), and those that do not (a Boolean's takes only `true`/`false`);
# an abbreviation reads as the one name it starts (`--loglev`). Shorthands: `-C` is --prefix, `-w` --workspace...
_NPM_STRINGS = frozenset((
    "call diff-dst-prefix diff-src-prefix editor git heading init-author-email init-author-name init-license "
    "init-type init.author.email init.author.name init.license message pack-destination preid save-prefix scope "
    "searchexclude searchopts shell tag tag-version-prefix user-agent viewer").split())
_NPM_VALUED = frozenset((
    "_auth access allow-directory allow-file allow-git allow-remote allow-scripts also audit-level auth-type before "
    "ca cache cache-max cache-min cafile cert cidr cpu depth diff diff-unified expect-result-count expires "
    "fetch-retries fetch-retry-factor fetch-retry-maxtimeout fetch-retry-mintimeout fetch-timeout globalconfig "
    "https-proxy include init-author-url init-module init-version init.author.url init.module init.version "
    "install-strategy key libc local-address location lockfile-version loglevel logs-dir logs-max name maxsockets "
    "min-release-age min-release-age-exclude node-gyp node-options noproxy omit only orgs os otp package packages "
    "prefix provenance-file proxy registry replace-registry-host sbom-format sbom-type scopes "
    "packages-and-scopes-permission orgs-permission password token-description script-shell searchlimit "
    "searchstaleness umask userconfig which workspace").split()) | _NPM_STRINGS
_NPM_FLAGS = frozenset((
    "all allow-same-version audit bin-links browser bypass-2fa color commit-hooks dangerously-allow-all-scripts "
    "description dev diff-ignore-all-space diff-name-only diff-no-prefix diff-text dry-run engine-strict "
    "expect-results force foreground-scripts format-package-lock fund git-tag-version global global-style if-present "
    "ignore-scripts include-staged include-workspace-root include-attestations init-private install-links json "
    "legacy-bundling legacy-peer-deps link long offline omit-lockfile-registry-resolved optional package-lock "
    "package-lock-only parseable allow-scripts-pending allow-scripts-pin prefer-dedupe prefer-offline prefer-online "
    "production progress provenance read-only rebuild-bundle save save-bundle save-dev save-exact save-optional "
    "save-peer save-prod packages-all shrinkwrap sign-git-commit sign-git-tag strict-peer-deps strict-allow-scripts "
    "strict-ssl timing unicode update-notifier usage version versions workspaces workspaces-update yes").split())
_NPM_NAMES = tuple(sorted(_NPM_VALUED | _NPM_FLAGS))
# npm's shorthands that stand for an option taking the next word (the others are flags, or carry their value:
# `-s` is `--loglevel silent`); `-p` is npx's --package (npm's --parseable: read as npx's, the safe side)
_NPM_SHORT = {"C": "prefix", "w": "workspace", "L": "location", "m": "message", "c": "call", "p": "package",
              "reg": "registry", "enjoy-by": "before"}
# npm's options that name a program npm runs or a file it reads settings from (NODE_OPTIONS, the shell running
# scripts, node-gyp, another .npmrc): as their npm_config_* variables, a hooks file setting one is Unread
_NPM_RUNS = frozenset(("node-options", "script-shell", "shell", "node-gyp", "userconfig", "globalconfig", "git",
                       "editor", "init-module"))
# npm commands that reify no tree (run no lifecycle script of a package they install, rebuild or link): every other
# npm command is read as an install (`dedupe`, `prune`, `uninstall`, `audit fix`, `edit`, a new one...)
_NPM_READS = frozenset((
    "run run-script rum urn test t tst start stop restart exec x view v info show ls list ll la pkg config c get set "
    "help help-search hlep prefix root search find s se whoami ping login logout adduser add-user owner author "
    "access token team org ogr profile star stars unstar deprecate undeprecate dist-tag dist-tags docs home bugs "
    "issues repo outdated explain why fund doctor query sbom cache completion diff find-dupes version verison "
    "audit pack publish").split())
_GIT_VALUED = frozenset(("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"))
_CONFIG_READS = frozenset(("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                           "--get-colorbool", "--edit", "-e", "--unset", "--unset-all", "--remove-section",
                           "--rename-section", "get", "list", "edit", "unset", "remove-section", "rename-section"))
_CONFIG_VALUED = frozenset(("--file", "-f", "--blob", "--type", "--default", "--comment", "--value"))


_NPM_SINGLES = frozenset("dqsnacfgLlmpCSBDEOP?Hhvwy")  # npm's one-letter shorthands, which a `-sC` group joins
_NPM_SHORT_FLAGS = frozenset((*(_NPM_SINGLES - {"C", "w", "L", "m", "c", "p"}), "dd", "ddd", "quiet", "silent",
                              "verbose", "desc", "help", "local", "no", "porcelain", "readonly", "iwr", "ws"))
_DASHES = re.compile(r"-{2,}")


def _npm_option(word: str) -> str:
    """The npm option ``word`` (its ``=value`` cut off) as nopt names it: a shorthand's option (``-C``: prefix), the
    last of a group of one-letter shorthands (``-sC``: prefix), the one name an abbreviation starts (``--loglev``);
    otherwise the word without its dashes (a flag nopt does not know, or a ``no-`` negation: takes no value)."""
    name = word.split("=", 1)[0].lstrip("-")
    if name in _NPM_SHORT:
        return _NPM_SHORT[name]
    if name in _NPM_VALUED or name in _NPM_FLAGS or name.startswith("no-"):
        return name
    if name in _NPM_SHORT_FLAGS:  # `-f` (--force), `-s` (--loglevel silent): no value of the next word
        return "-" + name
    if not word.startswith("--") and len(name) > 1 and set(name) <= _NPM_SINGLES:
        return _NPM_SHORT.get(name[-1], "-" + name[-1])
    longer = [known for known in _NPM_NAMES if known.startswith(name)] if name else []
    return longer[0] if len(longer) == 1 else name


def _npm_value_next(word: str, following: str | None) -> bool:
    """Whether npm (nopt) reads ``following``, the word after its option ``word``, as that option's value: always
    for an option that takes one (a String's not where it starts ``-x``), never past ``--`` or after ``=``; a
    flag's only ``true``, ``false`` (``null``, ``always``; browser's any word not starting ``-x``)."""
    if following is None or "=" in word or _DASHES.fullmatch(following) or _DASHES.fullmatch(word):
        return False
    name = _npm_option(word)
    if name in _NPM_VALUED:
        return name not in _NPM_STRINGS or not re.match(r"-{1,2}[^-]", following)
    return following in ("true", "false", "null", "always") or (
        name.removeprefix("no-") == "browser" and not re.match(r"-[^-]", following))


def _check_npm_option(word: str) -> None:
    """:class:`Unread` for an option of npm (pnpm, yarn, bun: the same names) that names what it runs or reads
    first (``--node-options=--require=x``: NODE_OPTIONS for every script), as its ``npm_config_*`` variable."""
    if word.startswith("-") and not _DASHES.fullmatch(word) and (name := _npm_option(word)) in _NPM_RUNS:
        raise Unread(f"npm's --{name} names what npm runs or reads first (npm_config_{name.replace('-', '_')}), "
                     "which CodeAct does not follow")


def _subcommand(words: list[str], start: int) -> str:
    """The first word of ``words[start:]`` that is no option nor an option's value (as npm reads its options, see
    :func:`_npm_value_next`), up to the command's end ("" if none)."""
    index = start
    while index < len(words) and index < start + 32:
        word = words[index]
        index += 1
        if set(word) <= _SEPARATOR:
            return ""
        if _DASHES.fullmatch(word):
            return words[index].lower() if index < len(words) and not set(words[index]) <= _SEPARATOR else ""
        if not word.startswith("-"):
            return word.lower()
        index += _npm_value_next(word, words[index] if index < len(words) else None)
    return ""


def _package_folders(words: list[str], start: int) -> list[str]:
    """The package folders ``npx``, ``npm exec``, ``pnpm dlx``, ``bunx`` run from the path specs of
    ``words[start:]``: its ``--package``/``-p`` values and the first word that is no option nor an option's value
    (npm's, :func:`_npm_value_next`: ``--prefix dir``, ``--loglevel error``), the command after ``exec``/``dlx``,
    where one is a folder or tarball as npm-package-arg reads it (:func:`_folder_spec`: ``./tool``, ``file:x``,
    ``x@./tool``): every file below each (its ``package.json`` picks the ``bin`` it runs)."""
    specs: list[str] = []
    index = start
    options = True
    while index < len(words) and index < start + 64 and not set(words[index]) <= _SEPARATOR:
        word = words[index]
        index += 1
        if options and _DASHES.fullmatch(word):
            options = False
        elif options and word.startswith("-"):
            _check_npm_option(word)
            following = words[index] if index < len(words) else None
            if _npm_option(word) == "package":
                if "=" in word:
                    specs.append(word.split("=", 1)[1])
                elif following is not None:
                    specs.append(following)
                    index += 1
            else:
                index += _npm_value_next(word, following)
        elif word.lower() not in ("exec", "x", "dlx") or specs or not options:
            specs.append(word)
            break
    found: list[str] = []
    for given in specs:
        spec = _folder_spec(given)
        if spec is not None and spec.lower().endswith((".tgz", ".tar.gz", ".tar")):
            found.append(spec)
        elif spec is not None:
            found += [os.path.join(spec, "package.json"), os.path.join(spec, "**")]
    return found


_NPM_URL = re.compile(r"(?:git\+)?[a-z]+:", re.IGNORECASE)
_NPM_GIT = re.compile(r"[^@]+@[^:.]+\.[^:]+:.+", re.IGNORECASE)
_GITHUB_SHORT = re.compile(r"[^:@%/\s.-][^:@%/\s]*/[^:@\s/%]+(?:#.*)?")


def _folder_spec(given: str) -> str | None:
    """The folder (or tarball) the package spec ``given`` names, as npm-package-arg reads it: ``name@spec`` split at
    the first ``@`` after a scope's, then ``file:x`` (any case), a spec starting ``.``, ``/``, ``~/`` or a drive, a
    tarball name, a path of slashes that is no GitHub ``user/repo``; a word starting ``$`` too (a folder named by a
    variable) and Windows' ``.\\``. None for a registry name, a URL, a git spec."""
    at = given.find("@", 1)
    head = given[:at] if at > 0 else given
    spec = given
    if _NPM_GIT.fullmatch(given) and not _NPM_URL.match(given):
        return None
    if _NPM_URL.match(given) or (not head.startswith("@") and (
            "/" in head or "\\" in head or head.lower().endswith((".tgz", ".tar.gz", ".tar")))):
        pass
    elif at > 0:
        spec = given[at + 1:]
    if spec.lower().startswith("file:"):
        return spec[5:] or "."
    if _NPM_URL.match(spec) and not re.match(r"[a-zA-Z]:", spec):
        return None
    if (spec.startswith((".", "/", "~/", "$", "\\")) or re.match(r"[a-zA-Z]:", spec)
            or spec.lower().endswith((".tgz", ".tar.gz", ".tar")) or spec.endswith(("/", "\\"))
            or (("/" in spec or "\\" in spec) and not _GITHUB_SHORT.fullmatch(spec))):
        return spec
    return None


def _git_and_npx_files(name: str, words: list[str], index: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """For ``git`` at ``words[index]``: :class:`Unread` for ``git -c`` (what its configuration names runs),
    :func:`_git_config_files`; for ``npx`` (``npm exec``, ``pnpm dlx``...): :func:`_package_folders`."""
    if name == "git" and any(other.startswith(("-c", "--config-env", "--exec-path")) for other in words[index + 1:]):
        raise Unread("git -c runs what its configuration names (core.hooksPath, diff.external, ...)")
    if name in ("git", "git.exe"):  # `git config core.hooksPath impl`: git runs impl/* from then on
        return _git_config_files(words, index + 1, root, cwd, plugin)
    if name in _NPXS or (name in _NPMS and _subcommand(words, index + 1) in ("exec", "x")) or (
            name in _PACKAGE_RUNNERS and _subcommand(words, index + 1) in ("dlx", "exec", "x")):
        return [expanded for file in _package_folders(words, index + 1)
                if (expanded := _expand(file, root, cwd, plugin)) is not None]
    return []


def _git_config_files(words: list[str], start: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """What a ``git config`` write among ``words[start:]`` makes git run: the files of the folder it names as
    ``core.hooksPath`` (read from the cwd and the repository's top, as git reads it), the file an
    ``include.path`` or ``includeIf.*.path`` names; :class:`Unread` for a folder not known here."""
    index = start
    while index < len(words) and words[index].startswith("-"):  # git's own options
        index += 1 + (words[index] in _GIT_VALUED)
    if index >= len(words) or words[index].lower() != "config":
        return []
    given: list[str] = []
    index += 1
    while index < len(words) and not set(words[index]) <= _SEPARATOR and len(given) < 4:
        word = words[index]
        index += 1
        if word.lower() in _CONFIG_READS:
            return []
        if word.startswith("-"):
            index += word in _CONFIG_VALUED
        elif word != "set" or given:
            given.append(word)
    if len(given) < 2:
        return []
    key, value = given[0].lower(), given[1]
    if key != "core.hookspath" and not (key.startswith("include") and key.endswith(".path")):
        return []
    expanded = _expand(value, root, cwd, plugin)
    if expanded is None:
        raise Unread(f"git config {given[0]} names {value!r}, a folder not known here, whose files git then runs")
    if key == "core.hookspath":
        return [os.path.join(expanded, "*"), os.path.join(root, expanded, "*")]
    return [expanded, os.path.join(root, expanded)]


# GNU xargs' options (findutils 4.9's getopt): short ones that take a value (the rest of the word or the next),
# those whose value is optional (only joined), flags; long ones that take a value (joined by `=` or the next word)
_XARGS_VALUED, _XARGS_OPTIONAL, _XARGS_FLAGS = "aEILnPsd", "eil", "0oprtx"
_XARGS_LONG = ("--arg-file", "--delimiter", "--max-args", "--max-chars", "--max-procs", "--process-slot-var")
_XARGS_OTHER = ("--null", "--eof", "--replace", "--max-lines", "--interactive", "--no-run-if-empty", "--verbose",
                "--exit", "--show-limits", "--open-tty", "--help", "--version")


def _check_xargs(words: list[str], start: int) -> None:
    """:class:`Unread` where ``xargs`` (its options from ``words[start]``) runs a command CodeAct does not read:
    one not known (a variable, a substitution, the input itself with ``-I``), a shell, interpreter or wrapper (the
    input becomes its code: ``xargs sh``, ``xargs -I{} bash -c 'echo {}'``), another command that runs commands,
    awk or sed given no program (the input is it), npx, npm or a package runner given no package or ``-I``'s
    string as it; an option not known here. Otherwise
    (``xargs -r npx prettier --write``) the command is read where it stands, the input its extra arguments; none
    at all runs ``echo``."""
    index, replace = start, ""
    while index < len(words) and words[index][:1] == "-" and words[index] != "-":
        word = words[index]
        index += 1
        if word == "--":
            break
        if word.startswith("--"):
            key, equals, value = word.partition("=")
            valued = [name for name in _XARGS_LONG if name.startswith(key)]
            other = [name for name in _XARGS_OTHER if name.startswith(key)]
            if len(valued) + len(other) != 1 and key not in _XARGS_LONG + _XARGS_OTHER:
                raise Unread(f"xargs {word} is an option CodeAct does not read")
            if valued and not equals:
                index += 1
            if "--replace".startswith(key) and len(key) > 3:
                replace = value or "{}"
            continue
        for at, letter in enumerate(word[1:], 1):
            rest = word[at + 1:]
            if letter in _XARGS_FLAGS:
                continue
            if letter in _XARGS_VALUED:
                value = rest or (words[index] if index < len(words) else "")
                index += not rest
                replace = value if letter == "I" else replace
            elif letter in _XARGS_OPTIONAL:
                replace = (rest or "{}") if letter == "i" else replace
            else:
                raise Unread(f"xargs {word} is an option CodeAct does not read")
            break
    if index >= len(words) or set(words[index]) <= _SEPARATOR or words[index] in _OUTPUT_REDIRECTS:
        return  # xargs runs echo
    command = words[index]
    name = _runner_name(command)
    end = next((n for n in range(index + 1, len(words)) if set(words[n]) <= _SEPARATOR), len(words))
    if "$" in command or "`" in command or (replace and replace in command) or name in _RUNS_CODE or \
            name in _SHELLS or _PYTHON.fullmatch(name) or name in _STDIN_RUNNERS or name in _WRAPPERS or \
            name in _KEYWORDS or name in _INDIRECT or name in ("xargs", "gxargs") or \
            (name in _FILTERS and not _has_program(name, words[:end], index + 1)) or \
            _runs_its_input(name, words[index + 1:end], replace):
        raise Unread(f"xargs runs {command} with its input, which CodeAct does not read")


def _runs_its_input(name: str, words: list[str], replace: str) -> bool:
    """Whether npx, npm or a package runner (``name``) that xargs runs with ``words`` runs a package its input
    names: none is named (``xargs npx -y``: the input's first word is it), or it is ``-I``'s string
    (``xargs -I{} npx {}``)."""
    if name not in _NPXS and name not in _NPMS and name not in _PACKAGE_RUNNERS:
        return False
    first = next((word for word in words if word[:1] != "-"), "")
    return not first or bool(replace and replace in first)


def _has_program(name: str, words: list[str], start: int) -> bool:
    """Whether awk or sed at ``words[start - 1]`` is given its program (``-e``, ``-f``, or a word)."""
    tool, index = "awk" if name in _AWKS else "sed", start
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--" or word[:1] != "-" or len(word) < 2:
            return index <= len(words) - (word == "--")
        flag, _, needs = _filter_option(tool, word)
        if flag in ("e", "f", "E"):
            return True
        index += needs
    return False


def _runner_name(word: str) -> str:
    """The command ``word`` runs, as runners are named: its file name in lower case, a package manager's version
    spec cut off (``npx pnpm@9 lint``, ``npx -y npm@10 run lint``: pnpm's, npm's)."""
    name = os.path.basename(word).lower()
    bare = name.split("@")[0]
    return bare if "@" in name[1:] and bare in (*_NPMS, *_PACKAGE_RUNNERS) else name


def _build_files(name: str, words: list[str], index: int, root: str, cwd: str, plugin: bool,
                 budget: _Budget | None) -> list[str]:
    """What a build tool at ``words[index]`` reads first (:mod:`codeact.core.buildfiles`: pip's, uv's, cargo's,
    Maven's), its project files read from each folder the command may run in."""
    from . import buildfiles

    module = ""
    if _PYTHON.fullmatch(name):  # `python -m pip install .`, `python3 -mbuild`
        kind, module, _ = _python_start(words, index + 1)
        if kind != "module" or module not in ("pip", "build"):
            return []
    elif name not in buildfiles.RUNNERS and not buildfiles.PIPS.fullmatch(name):
        return []
    bases: list[str] | None = None

    def expand(word: str) -> str | None:
        return _expand(word, root, cwd, plugin)

    def read(rel: str) -> list[bytes]:
        nonlocal bases
        where = expand(rel)
        if where is None:
            return []
        if budget is not None:
            budget.read = True
        bases = _bases(words, root, cwd, plugin) if bases is None else bases
        found = (read_regular_within(os.path.normpath(os.path.join(base, where)), os.path.realpath(root),
                                     MAX_HOOKS_BYTES) for base in bases)
        return [data for data, _ in filter(None, found) if len(data) <= MAX_HOOKS_BYTES]

    if module:
        at = next((n + 1 for n in range(index + 1, min(len(words), index + 32))
                   if words[n] == module or words[n].endswith("m" + module)), len(words))
        files = buildfiles.python_module_files(module, words, at, expand, read)
    else:
        files = buildfiles.build_files(name, words, index + 1, expand, read)
    return [file for given in files if (file := expand(given)) is not None]


def _runner_files(words: list[str], root: str, cwd: str, plugin: bool, budget: _Budget | None,
                  env: dict[str, str] | None = None) -> list[str]:
    """The files (relative to the folder a command runs in) that a runner among ``words`` reads first: a module's
    files for ``python -m a.b`` (``a/b.py``, ``a/b/__main__.py``, the packages' ``__init__.py``, there and in
    each folder of ``PYTHONPATH``), the Makefile for ``make`` (``-C dir``, ``-f file``, and the files of
    ``MAKEFILES``), ``package.json`` for ``npm run x``, ``npm test``, ``pnpm``, ``yarn`` (in ``npm_config_prefix``
    where set). Variables come from the entry's ``env``, or as the command sets them (``PYTHONPATH=src ...``)."""
    found: list[str] = []
    values = dict(env or {})
    for index, word in enumerate(words):
        name = _runner_name(word)
        if budget is not None and not index % 64:
            budget.spend(0)
        if name in ("xargs", "gxargs"):
            _check_xargs(words, index + 1)
        elif name in _INDIRECT:
            flags = _INDIRECT[name]
            later = {_flag(other) for other in words[index + 1:]}
            if flags is None or {_flag(flag) for flag in flags} & later:
                raise Unread(f"{name} runs commands CodeAct does not read")
        found += _program_files(name, words, index + 1, root, cwd, plugin)
        found += _git_and_npx_files(name, words, index, root, cwd, plugin)
        found += _build_files(name, words, index, root, cwd, plugin, budget)
        if _PYTHON.fullmatch(name) and any(_imports_a_category(words, later) for later in range(index + 1, len(words))):
            raise Unread("python -W names a warning category in a module, which Python imports first")
        if word in ("|", "|&") and index + 1 < len(words) and _reads_code(words, index + 1):
            raise Unread(f"a command piped into {words[index + 1]} runs what CodeAct does not read")
        env_name = _ENV_NAME.search(word)
        named = (env_name[1] or env_name[2]) if env_name else (
            word if index and words[index - 1] in _SETTERS else
            word[2:] if word.startswith("-v") and index and words[index - 1] == "printf" else "")  # `-vBASH_ENV`
        if named and UNFOLLOWED_VARIABLES.fullmatch(named):  # `export BASH_ENV`, `$env:BASH_ENV = ...`
            raise Unread(f"it sets {named}, which makes the command read a file CodeAct does not follow")
        assignment = _ASSIGNMENT.fullmatch(word)
        if assignment:  # `PYTHONPATH=src python3 -m app`, `env MAKEFILES=x.mk make`, `PYTHONPATH+=src`
            _check_variable(assignment[1])
            values[assignment[1]] = values.get(assignment[1], "") * bool(assignment[2]) + assignment[3]
        if name in _NODE_RUNNERS:  # `node -e "require('./tools/check')"`
            found += _node_code_files(words, index + 1, root, cwd, plugin, budget)
        if _PYTHON.fullmatch(name):
            found += _python_files(words, index + 1, values.get("PYTHONPATH"), root, cwd, plugin, budget)
        elif name in _MAKES or name in _NPMS or name in _PACKAGE_RUNNERS:
            options = _options(words, index + 1, name in _MAKES, name.split(".")[0])
            if name in _MAKES:  # make reads each file of MAKEFILES before the Makefile
                options += [("-f", file) for file in values.get("MAKEFILES", "").split()[:MAX_BASES]]
            else:  # npm reads its config from the environment, case-insensitively: the prefix is the folder
                prefix = next((value for key, value in values.items() if key.lower() == "npm_config_prefix"), "")
                options = [("--prefix", prefix)] * bool(prefix) + options
            found += _task_files(name, options, root, cwd, plugin)
        elif name in ("node", "node.exe") and any(w == "--run" or w.startswith("--run=") for w in words[index:]):
            found += ["package.json", *_packages_up("")]  # `node --run lint`: the nearest package.json's script
    return found


def _task_files(name: str, options: list[tuple[str, str]], root: str, cwd: str, plugin: bool) -> list[str]:
    """The file make (its Makefile, ``-C``, ``-f``) or npm, pnpm, yarn, bun (``package.json``, every command:
    each may run its scripts; a workspace's too, ``-w``) reads first, as ``options`` (:func:`_options`) say."""
    folder: str | None = ""
    named: list[str] = []
    workspaces: list[str] = []
    manager = _MANAGER_FILES.get(name.split(".")[0], ())
    loaded = [os.path.join(root, where, file) for file in manager for where in ("", "**")]
    for key, given in options:
        value = _expand(given, root, cwd, plugin) if given else given
        if key in _RUNNER_DIRS and given:  # `-C $X`: a folder not known here, read nothing
            folder = None if value is None or folder is None else os.path.join(folder, value)
        elif key in _MAKE_FILES and value:
            named.append(value)
        elif key in _WORKSPACES and value:
            workspaces.append(value)
    if folder is None:
        return loaded
    if name in _MAKES:
        return [os.path.join(folder, file) for file in named or _MAKEFILES]
    installed = [os.path.join(folder, where, file) for file in _INSTALL_FILES for where in ("", "**")] \
        if (_INSTALL, "") in options else []
    if installed:  # npm installs from the workspace root above (its scripts run): each folder up, its own files
        installed += [os.path.join(folder, *[".."] * up, file) for up in range(1, MAX_BASES + 1)
                      for file in _INSTALL_FILES if "*" not in file]
    return [*(os.path.join(folder, where, "package.json") for where in ("", *workspaces)), *_packages_up(folder),
            *installed, *loaded]


def _packages_up(folder: str) -> list[str]:
    """``package.json`` of each folder above ``folder``: npm, pnpm, yarn, bun and ``node --run`` run the script
    of the nearest one at or above the folder they run in (``npm run lint`` in ``web/``, which has none, runs the
    root's); those outside the repository drop."""
    return [os.path.join(folder, *[".."] * up, "package.json") for up in range(1, MAX_BASES + 1)]


def _options(words: list[str], start: int, make: bool = False, manager: str = "npm") -> list[tuple[str, str]]:
    """The words after make (``make``) or npm (``manager``: pnpm, yarn, bun) up to the command's end, as ``(option,
    value)``: ``-C dir``, ``-Cdir``, ``--directory=dir`` give ``("-c", "dir")`` (names case-folded); a plain word
    ``("", word)``; ``-f x`` and ``-w x`` take the next word too. In a group of short flags (``-sC dir``) the first
    that takes a value takes the rest or the next word: make's ``C``, ``f``, ``I``, ``o``, ``W`` (``j``, ``l``,
    ``O`` only the rest), npm's ``C``, ``w``; pnpm's ``--filter x``/``-F x`` and yarn's ``workspace x`` name a
    workspace. npm's options are read as nopt reads them (:func:`_npm_value_next`: ``--loglevel error``). The
    command (the first plain word) is an install (:data:`_INSTALL` and every workspace, ``("-w", "**")``) for npm
    unless it is one that reifies no tree (:data:`_NPM_READS`, :func:`_installs`), for the others where :data:`_INSTALLS` holds it,
    and for a bare ``yarn`` (yarn's install). :class:`Unread` for an option naming what npm runs
    (:func:`_check_npm_option`)."""
    found: list[tuple[str, str]] = []
    index = start
    command = ""
    while index < len(words) and len(found) < 64:
        word = words[index]
        index += 1
        if word and set(word) <= _SEPARATOR:
            break
        if not word.startswith("-") or (not make and _DASHES.fullmatch(word)):
            first = not make and not command
            if _DASHES.fullmatch(word):  # `npm -- ci`: the command; `npm run x -- --y`: the script's, no option
                if not first or index >= len(words) or set(words[index]) <= _SEPARATOR:
                    ends = next((n for n in range(index, len(words)) if set(words[n]) <= _SEPARATOR), len(words))
                    found += [("", later) for later in words[index:ends][:64]]
                    break
                word = words[index]
                index += 1
            command = command or word
            index = _plain_word(words, index, word, first, manager, found)
            continue
        key, equals, value = word.partition("=")
        low = key.lower()
        if not make and (low in _EVERY_WORKSPACE or word == "-r"):  # npm -ws, pnpm -r: every package.json
            found.append(("-w", "**"))
            continue
        if not make:
            _check_npm_option(word)
            if manager == "npm" and (read := _npm_read(words, index, word)):  # as nopt: `--loglevel x`, `-sC x`
                found.append(read[0])
                index = read[1]
                continue
        if low.startswith("--"):  # an unambiguous abbreviation, as getopt_long reads it: `--direc=x`
            longer = [name for name in _LONG_OPTIONS if name.startswith(low)]
            low = low if low in _LONG_OPTIONS or len(longer) != 1 else longer[0]
        else:  # short flags joined (`-sC dir`, `-sCdir`): the first that takes a value takes the rest or next word
            at = next((n for n, flag in enumerate(word[1:], 1) if flag in (_MAKE_VALUED if make else "CwF")), None)
            if at is not None:
                flag, value = word[at], word[at + 1:]
                if flag in "jlO":  # make's optional values: only the rest of the word
                    continue
                if flag in "IoW":  # a value, not a file make reads first
                    index += not value and index < len(words)
                    continue
                low = {"C": "-c", "f": "-f", "w": "-w", "F": "-w"}[flag]  # pnpm's -F: --filter, a workspace
                value = value if make else value.removeprefix("=")  # npm's `-w=impl` (nopt), not make's
        if not value and low in _VALUED and index < len(words):
            value = words[index]
            index += 1
        found.append((low, value))
    if not make and not command and manager == "yarn" and not {key for key, _ in found} & _YARN_ONLY_SAYS:
        found += [("-w", "**"), (_INSTALL, "")]  # a bare `yarn` (`yarn --frozen-lockfile`) installs
    return found


_YARN_ONLY_SAYS = frozenset(("--version", "-v", "--help", "-h"))  # a bare yarn with one of these installs nothing


def _npm_read(words: list[str], index: int, word: str) -> tuple[tuple[str, str], int] | None:
    """npm's option ``word`` (``words[index]`` the word after it) as nopt reads it, as :func:`_options` gives it
    (``("--prefix", dir)``, ``("-w", name)``, ``("--loglevel", "error")``), and where the next word is read from;
    None for an option nopt does not know (``-wimpl``: read as ``-w impl``, the safe side)."""
    name = _npm_option(word)
    if not (name in _NPM_VALUED or name in _NPM_FLAGS or name.startswith("-")):
        return None
    key, equals, value = word.partition("=")
    following = words[index] if index < len(words) else None
    if not equals and _npm_value_next(word, following):
        value, index = following or "", index + 1
    return ({"prefix": "--prefix", "workspace": "-w"}.get(name, "--" + name.lstrip("-")), value), index


def _plain_word(words: list[str], index: int, word: str, first: bool, manager: str,
                found: list[tuple[str, str]]) -> int:
    """:func:`_options`' reading of the plain ``word`` (``first``: the command), added to ``found``; where the
    next word is read from."""
    if word == "workspace" and first and index < len(words):  # `yarn workspace x lint`
        found.append(("-w", words[index]))
        return index + 1
    if word == "workspaces" and first:  # `yarn workspaces foreach`: every workspace
        found.append(("-w", "**"))
    elif first and _installs(manager, word.lower(), words[index:]):  # every workspace's install scripts run
        found += [("", word), ("-w", "**"), (_INSTALL, "")]
    else:
        found.append(("", word))
    return index


def _installs(manager: str, command: str, rest: list[str]) -> bool:
    """Whether ``manager``'s (npm, pnpm, yarn, bun) ``command``, followed by ``rest``, reifies a tree: runs the
    lifecycle scripts of every workspace package and local dependency it installs, rebuilds or links. npm: every
    command but those known to reify nothing (``npm audit`` but ``npm audit fix``)."""
    if manager != "npm":
        return command in _INSTALLS
    rest = rest[:next((n for n, word in enumerate(rest) if set(word) <= _SEPARATOR), len(rest))]
    if command == "audit":
        return "fix" in rest
    if command in ("pack", "publish"):  # the project's own prepack/prepare scripts; a folder's given as a spec
        return any(_folder_spec(word) is not None for word in rest)
    return command not in _NPM_READS


def _python_files(words: list[str], start: int, pythonpath: str | None, root: str, cwd: str, plugin: bool,
                  budget: _Budget | None = None) -> list[str]:
    """The files ``python ...`` (its options from ``words[start]`` on) may run first: ``-m a.b``'s files in the
    folder it runs in and in each folder of ``PYTHONPATH``, a script folder's (or zip's) ``__main__.py``,
    ``sitecustomize.py``, ``usercustomize.py`` in each folder of ``PYTHONPATH``, and what it imports from the
    folder first on its path (:func:`_import_files`: the script's, or for ``-c``/``-m`` the one it runs in)."""
    start_kind, given, isolated = _python_start(words, start)
    found: list[str] = []
    for folder in ["", *[part for part in re.split(r"[:;]", pythonpath or "") if part][:MAX_BASES]]:
        expanded = _expand(folder, root, cwd, plugin) if folder else ""
        if expanded is None:
            continue
        if folder:  # every Python start imports these from a PYTHONPATH folder, whatever it runs
            found += [os.path.join(expanded, "sitecustomize.py"), os.path.join(expanded, "usercustomize.py")]
        if start_kind == "script":  # a folder or zip runs its __main__.py
            if not given.lower().endswith((".py", ".pyw")) and not folder:
                found.append(os.path.join(given, "__main__.py"))
        elif start_kind == "module":
            found += [os.path.join(expanded, file) for file in _module_files(given)]
    script = _expand(given, root, cwd, plugin) if start_kind in ("script", "stdin") else None
    code = given if start_kind == "code" else f"import {given}" if start_kind == "module" else None
    bases = _bases(words, root, cwd, plugin)
    firsts: list[str | None] = ["" if start_kind in ("code", "module", "stdin") and not isolated else None]
    if start_kind == "script" and script is not None:  # its folder (a folder python runs: itself), as it is named
        firsts = [script if any(os.path.isdir(os.path.join(base, script)) for base in bases)  # and as it resolves
                  else os.path.dirname(script), *_real_folders(script, bases, root)]
    for folder in [*firsts, *[_expand(part, root, cwd, plugin) for part in re.split(r"[:;]", pythonpath or "")
                              if part][:MAX_BASES]]:  # PYTHONPATH's folders come before the standard library too
        found += _import_files(folder, script, code, root, bases, budget)
    return found


def _real_folders(script: str, bases: list[str], root: str) -> list[str]:
    """The folders (absolute, inside ``root``) of the script ``script`` read through its links, where they differ
    from where it is named: Python puts the folder of its real path first on ``sys.path``."""
    top = os.path.realpath(root)
    found: list[str] = []
    for base in bases:
        named = os.path.normpath(os.path.join(base, script))
        real = os.path.realpath(named)
        if real != named and real.startswith(top + os.sep) and os.path.dirname(real) not in found:
            found.append(os.path.dirname(real))
    return found


def _python_start(words: list[str], start: int) -> tuple[str, str, bool]:
    """What ``python ...`` runs, reading the words after the interpreter as CPython reads its options (short
    flags may be joined: ``-Im x``, ``-Imx``; ``-W``/``-X`` take a value): ``("module", name)`` for ``-m``,
    ``("code", text)`` for ``-c`` (and a here-string), ``("script", path)``, ``("stdin", path)`` for a program
    read from a file (``python3 - < x.py``, ``python3 < x.py``), or ``("", "")``; and whether ``-I``/``-P`` keep
    the folder it runs in off its path. :class:`Unread` for a program in a here-document."""
    index = start
    isolated = False
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("<", "<<<") and index < len(words):
            return ("stdin" if word == "<" else "code"), words[index], isolated
        if word in ("<<", "<<-"):
            raise Unread("python reads its program from a here-document, which CodeAct does not read; "
                         "put it in a script file")
        if word == "-":  # the program from stdin: a redirect after it names it
            continue
        if set(word) <= _SEPARATOR:
            break
        if not word.startswith("-"):
            return "script", word, isolated
        if word.startswith("--"):
            index += word == "--check-hash-based-pycs"  # the one long option that takes the next word
            continue
        flags = word[1:]
        for at, flag in enumerate(flags):
            if flag in "cm":
                rest = flags[at + 1:] or (words[index] if index < len(words) else "")
                return ("code" if flag == "c" else "module"), rest, isolated
            isolated = isolated or flag in "IP"
            if flag in "WX":
                index += 0 if flags[at + 1:] else 1
                break
    return "", "", isolated


def _import_files(folder: str | None, script: str | None, code: str | None, root: str, bases: list[str],
                  budget: _Budget | None) -> list[str]:
    """What a Python start imports from ``folder`` (relative to the folders it may run in, ``bases``; None: not on
    its path), a folder of its path before the standard library (:func:`codeact.core.pyimports.follow`): its
    surface (marked :data:`_FRESH`), and every file of each name ``script`` (a file, read from each base) or
    ``code`` imports, followed. :class:`Unread` where a module it runs moves where Python looks."""
    if folder is None:
        return []
    sources: list[str | bytes] = [code] if code is not None else []
    for base in bases if script is not None else ():
        text = _module_source(os.path.join(base, script or ""), root, budget)
        if text is not None:
            sources.append(text)
    top = os.path.realpath(root)

    def read(rel: str) -> bytes | None:
        return next((text for base in bases
                     if (text := _module_source(os.path.join(base, folder, rel), root, budget)) is not None), None)

    def modules(rel: str) -> list[str] | None:
        found: list[str] = []
        for base in bases:
            start = os.path.normpath(os.path.join(base, folder))
            below = os.path.join(start, rel)
            if not os.path.realpath(below).startswith(top + os.sep) or not os.path.isdir(below):
                continue
            for where, folders, files in os.walk(below):
                folders.sort()
                found += [os.path.relpath(os.path.join(where, name), start) for name in sorted(files)
                          if name.endswith(".py")]
                if len(found) > pyimports.MAX_MODULES:
                    return found
        return found or None

    followed = pyimports.follow(sources, read, modules) if sources else pyimports.Followed(pyimports.SURFACE, (),
                                                                                            False)
    moved = code is not None and (pyimports.imports_of(code) or pyimports.Imports(frozenset(), False, False)).chdir
    if followed.moves_path or moved:  # `-c`'s path entry '' follows an os.chdir of the code
        raise Unread("a Python program a hook runs loads a module by its path or changes where Python looks "
                     "(sys.path), which CodeAct does not follow; keep its imports beside it")
    escaped = _glob_escaped(folder)
    linked = [os.path.realpath(path) for base in bases for pattern in followed.whole if pattern.endswith(".*")
              if os.path.islink(path := os.path.join(base, folder, pattern[:-2] + ".py"))]  # helper.py -> shared/
    return [_FRESH + os.path.join(escaped, pattern) for pattern in followed.surface] + \
        [os.path.join(escaped, pattern) for pattern in followed.whole] + \
        [path for path in linked if path.startswith(os.path.realpath(root) + os.sep)]


def _module_source(file: str, root: str, budget: _Budget | None) -> bytes | None:
    """The text of the Python file ``file`` (a regular file inside ``root``) up to :data:`MAX_HOOKS_BYTES`, or
    None where it is missing (one larger is :data:`codeact.core.pyimports.TOO_LARGE`: not known). Read each time:
    a hooks file's answer that depends on it is not cached."""
    if budget is not None:
        budget.read = True
        budget.spend(0)
    read = read_regular_within(os.path.normpath(file), os.path.realpath(root), MAX_HOOKS_BYTES)
    if read is None:
        return None
    return read[0] if len(read[0]) <= MAX_HOOKS_BYTES else pyimports.TOO_LARGE


_SHELL_EXECS_PYTHON = re.compile(rb"^[\s'\"]*exec\b[^\n]*python", re.MULTILINE)  # sh/Python polyglots


def _runs_python(script: str, bases: list[str], root: str) -> bool:
    """Whether the script ``script`` runs as Python by itself: a ``.py`` name, a ``#!`` line naming python (the
    kernel reads 255 bytes of it), or a shell script whose first lines ``exec`` python (a sh/Python polyglot)."""
    if script.lower().endswith((".py", ".pyw")):
        return True
    for base in bases:
        read = read_regular_within(os.path.normpath(os.path.join(base, script)), os.path.realpath(root), 511)
        head = read[0] if read is not None else b""
        if head.startswith(b"#!") and (b"python" in head.split(b"\n", 1)[0] or _SHELL_EXECS_PYTHON.search(head)):
            return True
    return False


def _glob_escaped(path: str) -> str:
    """``path`` with the characters a glob reads (``*?[``) matched as themselves."""
    return re.sub(r"([*?[])", r"[\1]", path)


def _module_files(module: str) -> list[str]:
    """The files ``python -m module`` may run first, relative to a folder of ``sys.path``."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return []
    path = "/".join(parts)
    packages = ("/".join(parts[:n]) + "/__init__.py" for n in range(1, len(parts) + 1))
    return [f"{path}.py", f"{path}/__main__.py", *packages]


def _bases(words: list[str], root: str, cwd: str, plugin: bool) -> list[str]:
    """The folders a command's words are read from: ``cwd``, and those a ``cd`` in it changes to
    (``cd tools && ./audit.sh``), each ``cd`` read from every folder the earlier ones reached (and from ``cwd``,
    where one failed); a folder word holding ``*?[`` is a pattern, its targets patterns too. :class:`Unread` for
    a ``cd`` to a folder not known here (a variable, ``~``, a substitution: the words after it are read from
    there), past :data:`MAX_BASES` folder changes, or past eight times as many folders reached."""
    bases = [cwd]
    here = [cwd]
    changes = 0
    after_cd = env = False
    for word in words:
        low = word.lower()
        folder = _env_chdir(word) if env else None
        if after_cd and word.startswith("-") and folder is None:  # `cd -P x`, `-Path x`, `--`
            continue
        if after_cd or folder:
            given = folder or word
            expanded = _expand(given, root, cwd, plugin) if "`" not in given else None  # `cd "`echo x`"`
            if expanded is None:
                raise Unread(f"a command changes folder to {given!r}, which names a folder not known here; "
                             "name the folder as a path")
            changes += 1
            if changes >= MAX_BASES:
                raise Unread(f"a command that changes folder more than {MAX_BASES - 1} times")
            here = list(dict.fromkeys(os.path.normpath(os.path.join(base, expanded)) for base in [*here, cwd]))
            bases = list(dict.fromkeys([*bases, *here]))
            if len(bases) > 8 * MAX_BASES:
                raise Unread(f"a command whose folder changes reach more than {8 * MAX_BASES} folders")
            after_cd = False
            continue
        env = (env and not set(word) <= _SEPARATOR) or os.path.basename(low) == "env"
        after_cd = low in _CHANGE_DIR or (env and folder == "")  # `env -C dir cmd` (GNU env)
    return bases


def _env_chdir(word: str) -> str | None:
    """The folder GNU env's option ``word`` changes to, as getopt_long reads it: ``-Cdir``, ``-iCdir``,
    ``--chdir=dir``, ``--chd=dir`` give ``dir``; ``-C``, ``--chdir`` give ``""`` (the next word); None otherwise."""
    if word.startswith("--"):
        key, equals, value = word.partition("=")
        return value if len(key) > 2 and "--chdir".startswith(key) and (value or not equals) else None
    if not word.startswith("-"):
        return None
    for at, flag in enumerate(word[1:], 1):
        if flag in "uSa":  # these take a value: the rest is theirs
            return None
        if flag == "C":
            return word[at + 1:]
    return None


def _targets(text: str, named: bool, bases: list[str], root: str) -> list[Target]:
    """The targets inside ``root`` that the path ``text`` stands for, read from each of ``bases`` (a Python
    start's surface where ``text`` begins with :data:`_FRESH`)."""
    fresh = text.startswith(_FRESH)
    text = text.removeprefix(_FRESH)
    found: list[Target] = []
    for base in bases:
        target = os.path.normpath(os.path.join(base, text))
        if target == root or not target.startswith(root.rstrip(os.sep) + os.sep):
            continue
        glob = any(char in _GLOB for char in target[len(root):])  # `./x/*.sh`, or from a `cd im*` folder
        key = fold(target)
        if glob:  # `./scripts/*.sh`: the shell runs every match; the repository's own path matched as text
            top = fold(root)
            key = re.sub(r"([*?[])", r"[\1]", top) + key[len(top):]
        found.append(Target(target, key, named, glob, fresh))
    return found


_FRESH = "\x01"  # marks a path of a Python start's surface (no path holds it)


def _substituted(text: str, env: object = None, plugin: bool = False) -> str:
    """``text`` as the shell reads it before splitting, as far as paths go: the entry's own ``env`` values in
    place of their variables (``$D``, ``${D}``, ``${D:-x}``, ``$env:D``, ``%D%``; not those hookruns sets itself),
    ``$'...'`` (ANSI-C quoting) decoded, and the command substitutions that name the repository's top (``$(git
    rev-parse --show-toplevel)``) or the cwd (``$(pwd)``, ``` `pwd` ```, ``$(Get-Location)``) written as the
    variables that name them (for a plugin's hooks the top is the session's folder: not known here).
    :class:`Unread` where the values make it longer than :data:`MAX_COMMAND_CHARS`."""
    if isinstance(env, dict) and env and ("$" in text or "%" in text):
        own = (*(_PLUGIN_VARS if plugin else _PROJECT_VARS), "PWD", "CD")
        values = {name: value for name, value in env.items()
                  if isinstance(name, str) and isinstance(value, str) and name not in own}
        size = [len(text)]

        def value_of(match: re.Match[str]) -> str:
            name = next(group for group in match.groups() if group)
            found = values.get(name)
            if found is None:
                return match[0]
            size[0] += len(found)
            if size[0] > MAX_COMMAND_CHARS:
                raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB once its env is read")
            return found

        text = _VARIABLE.sub(value_of, text)
    if "$'" in text:
        text = _ANSI_C.sub(lambda match: _ansi_c(match[1]), text)
    if '$"' in text:  # bash's locale quoting: `$"impl/run.sh"` reads as "impl/run.sh"
        text = _LOCALE.sub('"', text)
    if "$(" not in text and "`" not in text:
        return text
    text = _TOP_SUBST.sub("${COPILOT_PROJECT_DIR}", text)
    return _PWD_SUBST.sub("${PWD}", text)


def _ansi_c(body: str) -> str:
    """The text bash's ``$'...'`` stands for, as a shell word quoted for :mod:`shlex`: its escapes (a backslash
    and a letter, ``x`` and hex digits, octal digits, ``u``/``U`` and hex digits) decoded, one it does not know
    kept as written."""
    import shlex

    def decoded(match: re.Match[str]) -> str:
        escape = match[1]
        if escape[0] in "xuU":
            return chr(int(escape[1:], 16)) if len(escape) > 1 and int(escape[1:], 16) <= 0x10FFFF else match[0]
        if escape[0] in "01234567":
            return chr(int(escape, 8) & 0xFF)
        return _C_ESCAPES.get(escape, match[0])

    return shlex.quote(_ESCAPE.sub(decoded, body))


_PS_ENV = re.compile(r"(?i)\$\{env:(\w+)\}|\$env:(\w+)")


def _expand(word: str, root: str, cwd: str, plugin: bool = False) -> str | None:
    """``word`` with the variables that name the project (``$CLAUDE_PROJECT_DIR``, ``$COPILOT_PROJECT_DIR``, or with
    ``plugin`` the plugin's ``$CLAUDE_PLUGIN_ROOT``, ``$COPILOT_PLUGIN_ROOT``), ``$PWD``, and their ``${}``,
    ``$env:`` and ``%%`` forms replaced, and ``${VAR:-default}`` read as ``$VAR`` where that is one of them, else as
    its default; None where another variable or ``~`` is left, since what it names is not known here."""
    if "${" in word and ("-" in word or "=" in word):
        known = (*(_PLUGIN_VARS if plugin else _PROJECT_VARS), "PWD")
        word = _DEFAULTED.sub(lambda m: f"${{{m[1]}}}" if m[1] in known else m[2], word)
    if "$" in word or "%" in word:
        if "env:" in word.lower():  # PowerShell's `${env:D}` and `$Env:D` are `$env:D`
            word = _PS_ENV.sub(lambda match: "$env:" + (match[1] or match[2]), word)
        for name, value in ((var, root) for var in (_PLUGIN_VARS if plugin else _PROJECT_VARS)):
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


def matches(targets: tuple[Target, ...], key: str, exists: bool) -> bool:
    """Whether the path whose :func:`fold` is ``key`` (``exists``: there now) is one of ``targets``."""
    for target in targets:
        if (not target.named and not exists) or (target.fresh and exists and not pyimports.shadows(key)):
            continue
        if (_glob_matches(target.key, key) if target.glob else key == target.key):
            return True
    return False


WIDE_GLOB = 4096  # code points a glob word's classes may span before it is taken to match any path, uncompiled
_GLOBS: dict[str, re.Pattern[str] | None] = {}  # compiled glob words (None: too wide, taken to match)


def _glob(pattern: str) -> re.Pattern[str] | None:
    """The shell glob ``pattern`` compiled (``fnmatchcase``'s), once and without re's cache; ``None`` for one whose
    classes span more than :data:`WIDE_GLOB` code points, which re compiles one code point at a time with no
    deadline (the caller takes the safe side)."""
    if pattern not in _GLOBS:
        if len(_GLOBS) >= 1024:  # hooks files' words: a bounded set, kept small in the warm server
            _GLOBS.clear()
        _GLOBS[pattern] = compile_narrow(fnmatch.translate(pattern), WIDE_GLOB)
    return _GLOBS[pattern]


def _glob_matches(pattern: str, name: str) -> bool:
    """Whether ``name`` matches the glob word ``pattern`` as the shell matches a path: ``*``, ``?`` and a class
    within one part; ``**`` anywhere makes every ``*`` cross parts (what a variable, an unread brace or a
    workspace stands for). A too wide one is taken to match: the write is refused."""
    if "**" in pattern:
        regex = _glob(pattern)
        return regex is None or regex.match(name) is not None
    parts, names = pattern.split("/"), name.split("/")
    if len(parts) != len(names):
        return False
    for part, given in zip(parts, names):
        if part == given:
            continue
        regex = _glob(part)
        if regex is not None and regex.match(given) is None:
            return False
    return True
