"""The first files a runner reads: make's Makefile, the package managers' package.json and installs, git's config
commands, npx, xargs, cargo's, pip's and Maven's project files (:mod:`.buildfiles`)."""
from __future__ import annotations

import json
import os
import re

from ..beneath import read_regular_within
from . import buildfiles
from .bounds import MAX_BASES, MAX_HOOKS_BYTES, Budget, Unread
from .commands import data_tool_runs, reads_code, runs_named_script, tree_script
from .filters import filter_option, filter_program
from .matching import GLOB, Target
from .names import (
    AWKS,
    CONFIG_READS,
    CONFIG_VALUED,
    ENV_NAME,
    FILTERS,
    FORMATTERS,
    GIT_VALUED,
    GO_MODULE_FILES,
    GO_RUNS,
    INDIRECT,
    INSTALL,
    INSTALL_FILES,
    MAKE_FILES,
    MAKEFILES,
    MAKES,
    MANAGER_FILES,
    NODE_RUNNERS,
    NPMS,
    NPXS,
    OUTPUT_REDIRECTS,
    PACKAGE_RUNNERS,
    PYTHON,
    RUNNER_DIRS,
    SEPARATOR,
    SETTERS,
    TOOL_CONFIGS,
    UNFOLLOWED_VARIABLES,
    WORKSPACES,
    XARGS_DATA,
)
from .node import node_code_files
from .options import folder_spec, package_folders, runner_options, subcommand_of
from .paths import command_bases, targets_from
from .python_start import python_files, read_python_start
from .words import ASSIGNMENT, as_flag, check_variable, expand_word


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


def _program_files(name: str, words: list[str], start: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """For a search tool or text filter before ``words[start]``: :class:`Unread` where it runs commands CodeAct
    does not read (:func:`_finder_runs`, :func:`filter_program`); the program files it names (``awk -f x``)."""
    reason = _finder_runs(name, words, start)
    programs: list[str] = []
    if name in FILTERS and not reason:  # strict in check_commands, of a POSIX shell's words
        reason, programs = filter_program(name, words, start, strict=False, nested=True)
    if reason:
        raise Unread(reason)
    return [file for given in programs if (file := expand_word(given, root, cwd, plugin)) is not None]


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
        index += 1 + (words[index] in GIT_VALUED)
    if index >= len(words) or words[index].lower() != "grep":
        return ""
    for word in words[index + 1:]:
        if word == "--" or (word and set(word) <= SEPARATOR):
            break
        key = word.partition("=")[0]
        letters = word[1:] if word[:1] == "-" and word[1:2] != "-" else ""
        pager = next((letter == "O" for letter in letters if letter in "OefABCm"), False)  # -lObash, not -eO
        if pager or (len(key) >= 4 and "--open-files-in-pager".startswith(key)):
            return "git grep -O runs a pager on the files it finds, which CodeAct does not read"
    return ""


_DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
MAX_LOCAL_PACKAGES = 64  # local packages (`file:../x`) followed from one install; past it the hooks file is Unread


def local_dependencies(text: str, bases: list[str], root: str, budget: Budget | None) -> list[Target]:
    """For ``text``, an install's ``package-lock.json`` (none other: nothing), what the install in its folder
    (from each of ``bases``) installs from the repository outside that folder: the
    local dependencies its ``package.json`` names (``file:../shared``, ``../shared``, ``link:``, a tarball), and
    theirs in turn, each protected as an install's folder (its ``package.json``, ``binding.gyp``..., whose
    lifecycle scripts run) or tarball. Read each time (not cached); :class:`Unread` past
    :data:`MAX_LOCAL_PACKAGES` packages or for a ``package.json`` over :data:`MAX_HOOKS_BYTES`."""
    if os.path.basename(text) != INSTALL_FILES[0] or GLOB & set(text):
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
            local = spec[5:] if spec.lower().startswith("link:") else folder_spec(spec)
            if local is None or local.startswith(("$", "~")):
                continue
            path = os.path.normpath(os.path.join(here, local))
            if local.lower().endswith((".tgz", ".tar.gz", ".tar")):
                found += targets_from(path, True, [here], root)
                continue
            found += [target for file in ("package.json", *INSTALL_FILES) if "*" not in file
                      for target in targets_from(os.path.join(path, file), True, [here], root)]
            pending.append(path)
    return found


def _git_and_npx_files(name: str, words: list[str], index: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """For ``git`` at ``words[index]``: :class:`Unread` for ``git -c`` (what its configuration names runs),
    :func:`_git_config_files`; for ``npx`` (``npm exec``, ``pnpm dlx``...): :func:`package_folders`."""
    if name == "git" and any(other.startswith(("-c", "--config-env", "--exec-path")) for other in words[index + 1:]):
        raise Unread("git -c runs what its configuration names (core.hooksPath, diff.external, ...)")
    if name in ("git", "git.exe"):  # `git config core.hooksPath impl`: git runs impl/* from then on
        return _git_config_files(words, index + 1, root, cwd, plugin)
    if name in NPXS or (name in NPMS and subcommand_of(words, index + 1) in ("exec", "x")) or (
            name in PACKAGE_RUNNERS and subcommand_of(words, index + 1) in ("dlx", "exec", "x")):
        return [expanded for file in package_folders(words, index + 1)
                if (expanded := expand_word(file, root, cwd, plugin)) is not None]
    return []


def _git_config_files(words: list[str], start: int, root: str, cwd: str, plugin: bool) -> list[str]:
    """What a ``git config`` write among ``words[start:]`` makes git run: the files of the folder it names as
    ``core.hooksPath`` (read from the cwd and the repository's top, as git reads it), the file an
    ``include.path`` or ``includeIf.*.path`` names; :class:`Unread` for a folder not known here."""
    index = start
    while index < len(words) and words[index].startswith("-"):  # git's own options
        index += 1 + (words[index] in GIT_VALUED)
    if index >= len(words) or words[index].lower() != "config":
        return []
    given: list[str] = []
    index += 1
    while index < len(words) and not set(words[index]) <= SEPARATOR and len(given) < 4:
        word = words[index]
        index += 1
        if word.lower() in CONFIG_READS:
            return []
        if word.startswith("-"):
            index += word in CONFIG_VALUED
        elif word != "set" or given:
            given.append(word)
    if len(given) < 2:
        return []
    key, value = given[0].lower(), given[1]
    if key != "core.hookspath" and not (key.startswith("include") and key.endswith(".path")):
        return []
    expanded = expand_word(value, root, cwd, plugin)
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
    if index >= len(words) or set(words[index]) <= SEPARATOR or words[index] in OUTPUT_REDIRECTS:
        return  # xargs runs echo
    command = words[index]
    name = _runner_name(command)
    end = next((n for n in range(index + 1, len(words)) if set(words[n]) <= SEPARATOR), len(words))
    if "$" in command or "`" in command or (replace and replace in command) or \
            not _xargs_reads_data(name, words, index, end, replace):
        raise Unread(f"xargs runs {command} with its input, which CodeAct does not read as data; run a known "
                     "data tool or a script named by its path")


def _xargs_reads_data(name: str, words: list[str], index: int, end: int, replace: str) -> bool:
    """Whether the command ``words[index]`` (``name``) that xargs runs with its input as extra arguments reads
    them as data (an allowlist, as a pipe's reader is: a command that runs what it is given may have any name,
    ``rbash``, ``flock l bash``, ``taskset 1 bash``, ``make -f``): a tool of :data:`XARGS_DATA` (sort without
    its code options), awk or sed given their program in the hook's words (not ``-f``/``-e`` taking the input's
    first word), npx (``npm exec``, ``pnpm exec``, ``yarn``, ``bunx``) running a formatter or linter of
    :data:`FORMATTERS` named in the hook, a package.json script (``xargs npm run fmt --``, protected), git's
    ``add``, ``rm``, ``ls-files``, ``check-ignore``, or a script of the repository named by its path
    (``xargs ./tools/fmt.sh``, protected)."""
    rest = words[index + 1:end]
    if name in XARGS_DATA:
        return not data_tool_runs(name, rest)
    if name in FILTERS:
        last = rest[-1] if rest else ""
        return _has_program(name, words[:end], index + 1) and not (
            last in ("-f", "-e", "--file", "--expression", "--source", "-E") or
            (re.fullmatch(r"-[a-zA-Z]*[fe]", last) is not None and name in AWKS))
    if name in ("git", "git.exe"):
        return bool(rest) and rest[0] in ("add", "rm", "ls-files", "check-ignore", "diff-files")
    if name in NPXS or name in NPMS or name in PACKAGE_RUNNERS:
        if name not in NPXS and runs_named_script(words, index + 1, end):
            return True
        named = [word for word in rest if word[:1] != "-"]
        if named[:1] and name not in NPXS and named[0] in ("exec", "x", "dlx"):
            named = named[1:]
        if not named or (replace and replace in named[0]):
            return False  # `xargs npx -y`: the input names the package
        package = re.sub(r"(?<=.)@[^/]*$", "", named[0]).rsplit("/", 1)[-1].lower()
        return package in FORMATTERS
    return tree_script(words[index], words)


def _has_program(name: str, words: list[str], start: int) -> bool:
    """Whether awk or sed at ``words[start - 1]`` is given its program (``-e``, ``-f``, or a word)."""
    tool, index = "awk" if name in AWKS else "sed", start
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--" or word[:1] != "-" or len(word) < 2:
            return index <= len(words) - (word == "--")
        flag, _, needs = filter_option(tool, word)
        if flag in ("e", "f", "E"):
            return True
        index += needs
    return False


def _runner_name(word: str) -> str:
    """The command ``word`` runs, as runners are named: its file name in lower case, a package manager's version
    spec cut off (``npx pnpm@9 lint``, ``npx -y npm@10 run lint``: pnpm's, npm's)."""
    name = os.path.basename(word).lower()
    bare = name.split("@")[0]
    return bare if "@" in name[1:] and bare in (*NPMS, *PACKAGE_RUNNERS) else name


def _build_files(name: str, words: list[str], index: int, root: str, cwd: str, plugin: bool,
                 budget: Budget | None) -> list[str]:
    """What a build tool at ``words[index]`` reads first (:mod:`codeact.core.hookruns.buildfiles`: pip's, uv's, cargo's,
    Maven's), its project files read from each folder the command may run in."""
    module = ""
    if PYTHON.fullmatch(name):  # `python -m pip install .`, `python3 -mbuild`
        kind, module, _ = read_python_start(words, index + 1)
        if kind != "module" or module not in ("pip", "build"):
            return []
    elif name not in buildfiles.RUNNERS and not buildfiles.PIPS.fullmatch(name):
        return []
    bases: list[str] | None = None

    def expand(word: str) -> str | None:
        return expand_word(word, root, cwd, plugin)

    def read(rel: str) -> list[bytes]:
        nonlocal bases
        where = expand(rel)
        if where is None:
            return []
        if budget is not None:
            budget.read = True
        bases = command_bases(words, root, cwd, plugin) if bases is None else bases
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


def runner_files(words: list[str], root: str, cwd: str, plugin: bool, budget: Budget | None,
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
        elif name in INDIRECT:
            flags = INDIRECT[name]
            later = {as_flag(other) for other in words[index + 1:]}
            if flags is None or {as_flag(flag) for flag in flags} & later:
                raise Unread(f"{name} runs commands CodeAct does not read")
        found += _program_files(name, words, index + 1, root, cwd, plugin)
        found += _git_and_npx_files(name, words, index, root, cwd, plugin)
        found += _build_files(name, words, index, root, cwd, plugin, budget)
        found += _go_files(name, words, index + 1) + _config_files(name)
        if PYTHON.fullmatch(name) and any(_imports_a_category(words, later) for later in range(index + 1, len(words))):
            raise Unread("python -W names a warning category in a module, which Python imports first")
        if word in ("|", "|&") and index + 1 < len(words) and reads_code(words, index + 1, strict=False):
            raise Unread(f"a command piped into {words[index + 1]} runs what CodeAct does not read")
        env_name = ENV_NAME.search(word)
        named = (env_name[1] or env_name[2]) if env_name else (
            word if index and words[index - 1] in SETTERS else
            word[2:] if word.startswith("-v") and index and words[index - 1] == "printf" else "")  # `-vBASH_ENV`
        if named and UNFOLLOWED_VARIABLES.fullmatch(named):  # `export BASH_ENV`, `$env:BASH_ENV = ...`
            raise Unread(f"it sets {named}, which makes the command read a file CodeAct does not follow")
        assignment = ASSIGNMENT.fullmatch(word)
        if assignment:  # `PYTHONPATH=src python3 -m app`, `env MAKEFILES=x.mk make`, `PYTHONPATH+=src`
            check_variable(assignment[1], assignment[3])
            values[assignment[1]] = values.get(assignment[1], "") * bool(assignment[2]) + assignment[3]
        if name in NODE_RUNNERS:  # `node -e "require('./tools/check')"`
            found += node_code_files(words, index + 1, root, cwd, plugin, budget)
        if PYTHON.fullmatch(name):
            found += python_files(words, index + 1, values.get("PYTHONPATH"), root, cwd, plugin, budget)
        elif name in MAKES or name in NPMS or name in PACKAGE_RUNNERS:
            options = runner_options(words, index + 1, name in MAKES, name.split(".")[0])
            if name in MAKES:  # make reads each file of MAKEFILES before the Makefile
                options += [("-f", file) for file in values.get("MAKEFILES", "").split()[:MAX_BASES]]
            else:  # npm reads its config from the environment, case-insensitively: the prefix is the folder
                prefix = next((value for key, value in values.items() if key.lower() == "npm_config_prefix"), "")
                options = [("--prefix", prefix)] * bool(prefix) + options
            found += _task_files(name, options, root, cwd, plugin)
        elif name in ("node", "node.exe") and any(w == "--run" or w.startswith("--run=") for w in words[index:]):
            found += ["package.json", *_packages_up("")]  # `node --run lint`: the nearest package.json's script
    return found


def _up(folder: str, files: tuple[str, ...]) -> list[str]:
    """``files`` in ``folder`` and each folder above it (those outside the repository drop)."""
    return [os.path.join(folder, *[".."] * up, file) for up in range(MAX_BASES + 1) for file in files]


def _config_files(name: str) -> list[str]:
    """The configuration files (:data:`TOOL_CONFIGS`) a formatter, linter or hook runner named by the word
    ``name`` loads as code (``npx eslint --fix .``, ``pre-commit run``, ``npx prettier@3 --write .``), in the
    folder it runs in and each one up; any word naming one counts."""
    bare = name.split("@")[0] if "@" in name[1:] else name
    return _up("", TOOL_CONFIGS.get(bare.removesuffix(".cmd").removesuffix(".exe"), ()))


def _go_files(name: str, words: list[str], start: int) -> list[str]:
    """What ``go run``, ``go test``, ``go generate`` (:data:`GO_RUNS`) compile and run: the ``*.go`` files of each
    package named (``./cmd/x``, ``.``, ``./...``: every one below; a ``.go`` file; none: the folder run in; an
    import path with no version: every one of the repository; ``go run``'s first only), and
    :data:`GO_MODULE_FILES` of the folder run in (``-C dir``) and each folder up."""
    if name not in ("go", "go.exe"):
        return []
    folder, index = "", start
    while index < len(words) and words[index] in ("-C", "-modfile"):
        folder = words[index + 1] if words[index] == "-C" and index + 1 < len(words) else folder
        index += 2
    if index >= len(words) or words[index] not in GO_RUNS:
        return []
    found: list[str] = []
    given = False
    for word in words[index + 1:]:
        if not word or set(word) <= SEPARATOR or word in OUTPUT_REDIRECTS or word == "-args" or \
                given and words[index] == "run":  # `go run ./x a b`: the program's arguments
            break
        if word[:1] == "-":
            continue
        given = True
        if word.endswith(".go"):
            found.append(os.path.join(folder, word))
        elif word == "." or word.startswith(("./", "../", ".\\")):
            below = word.endswith("/...")
            package = word.removesuffix("/...") if below else word
            found.append(os.path.join(folder, package, "**" if below else "", "*.go"))
        elif "@" not in word:  # `go run m/cmd/x`, `go test all`: maybe the module's own, wherever it lies
            found.append(os.path.join(folder, "**", "*.go"))
    return (found if given else [os.path.join(folder, "*.go")]) + _up(folder, GO_MODULE_FILES)


def _task_files(name: str, options: list[tuple[str, str]], root: str, cwd: str, plugin: bool) -> list[str]:
    """The file make (its Makefile, ``-C``, ``-f``) or npm, pnpm, yarn, bun (``package.json``, every command:
    each may run its scripts; a workspace's too, ``-w``) reads first, as ``options`` (:func:`runner_options`) say."""
    folder: str | None = ""
    named: list[str] = []
    workspaces: list[str] = []
    manager = MANAGER_FILES.get(name.split(".")[0], ())
    loaded = [os.path.join(root, where, file) for file in manager for where in ("", "**")]
    for key, given in options:
        value = expand_word(given, root, cwd, plugin) if given else given
        if key in RUNNER_DIRS and given:  # `-C $X`: a folder not known here, read nothing
            folder = None if value is None or folder is None else os.path.join(folder, value)
        elif key in MAKE_FILES and value:
            named.append(value)
        elif key in WORKSPACES and value:
            workspaces.append(value)
    if folder is None:
        return loaded
    if name in MAKES:
        return [os.path.join(folder, file) for file in named or MAKEFILES]
    installed = [os.path.join(folder, where, file) for file in INSTALL_FILES for where in ("", "**")] \
        if (INSTALL, "") in options else []
    if installed:  # npm installs from the workspace root above (its scripts run): each folder up, its own files
        installed += [os.path.join(folder, *[".."] * up, file) for up in range(1, MAX_BASES + 1)
                      for file in INSTALL_FILES if "*" not in file]
    return [*(os.path.join(folder, where, "package.json") for where in ("", *workspaces)), *_packages_up(folder),
            *installed, *loaded]


def _packages_up(folder: str) -> list[str]:
    """``package.json`` of each folder above ``folder``: npm, pnpm, yarn, bun and ``node --run`` run the script
    of the nearest one at or above the folder they run in (``npm run lint`` in ``web/``, which has none, runs the
    root's); those outside the repository drop."""
    return [os.path.join(folder, *[".."] * up, "package.json") for up in range(1, MAX_BASES + 1)]
