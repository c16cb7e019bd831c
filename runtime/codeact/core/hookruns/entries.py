"""A hooks file's entries and the targets each names: the top of the reader, cached by the file's identity."""
from __future__ import annotations

import json
import os
import re

from ..beneath import read_regular_within
from .bounds import MAX_COMMAND_CHARS, MAX_DEPTH, MAX_ENTRIES, MAX_HOOKS_BYTES, MAX_NODES, Budget, Unread
from .commands import check_commands, check_here_documents, check_windows_pipes, copied_sources
from .filters import check_filters
from .matching import Target
from .names import (
    CHANGE_DIR,
    INTERPRETERS,
    NODE_RUNNERS,
    OUTPUT_REDIRECTS,
    PLUGIN_VARS,
    PROJECT_VARS,
    SCRIPT_SUFFIXES,
    SEPARATOR,
)
from .node import check_node_stdin, node_files
from .paths import command_bases, literal_loops, targets_from, word_texts
from .python_start import import_files, runs_python
from .runners import local_dependencies, runner_files
from .words import assigned, check_expansions, check_variable, shell_words, substituted_text, windows_words, with_nested

SHELL_KEYS = ("bash", "command", "linux", "osx")  # run by sh/bash: split as a POSIX shell splits
WINDOWS_KEYS = ("powershell", "windows", "command")  # PowerShell's or cmd's: split on white space (`command` runs on
# every platform, so it is read both ways)


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
    budget = Budget()
    try:
        found = targets_of(data, root, plugin=plugin, budget=budget, hook_dir=os.path.dirname(file))
    except Unread as exc:  # kept as read: the next write is refused without reading it again
        _CACHE[file] = (signature, str(exc))
        raise
    if not budget.read:  # what depends on another file (a package.json's main) is read again each time
        _CACHE[file] = (signature, found)
    return found


_CACHE: dict[str, tuple[tuple[object, ...], tuple[Target, ...] | str]] = {}


def targets_of(data: bytes, root: str, *, plugin: bool = False, budget: Budget | None = None,
               hook_dir: str | None = None) -> tuple[Target, ...]:
    """The targets the hooks JSON ``data`` names, resolved in the repository ``root`` (or the plugin's folder, see
    :func:`targets_in`); none if it is not JSON (a leading byte-order mark is skipped), :class:`Unread` if it nests
    deeper than Python's reader goes."""

    try:
        parsed = json.loads(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    except ValueError:  # no JSON the CLI reads either
        return ()
    except RecursionError:  # JSON nested deeper than Python's reader goes, which Node's (the CLI's) reads
        raise Unread("JSON nested deeper than CodeAct reads") from None
    return targets_in(parsed, root, plugin=plugin, budget=budget, hook_dir=hook_dir)


def targets_in(parsed: object, root: str, *, plugin: bool = False, budget: Budget | None = None,
               hook_dir: str | None = None) -> tuple[Target, ...]:
    """The targets the parsed hooks ``parsed`` names inside ``root``, each entry read from its ``cwd`` (relative to
    ``root``). ``plugin``: ``root`` is a plugin's folder, which ``${CLAUDE_PLUGIN_ROOT}`` and
    ``${COPILOT_PLUGIN_ROOT}`` name; the project's variables then name nothing known here (the session's folder).
    ``hook_dir``: the folder of the hooks file, which ``$COPILOT_HOOK_DIR`` names (the CLI sets it)."""
    budget = budget or Budget()
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
            check_variable(name)
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
        "${" + (PLUGIN_VARS[1] if plugin else PROJECT_VARS[1]) + "}" + ("" if rel == "." else "/" + rel)
    return {"COPILOT_HOOK_DIR": value} if re.fullmatch(r"[\w./${}:\\-]+", value) else {}


def _entry_words(entry: dict[str, object], root: str, base: str, plugin: bool, budget: Budget,
                 runner_env: dict[str, str], given: dict[str, str] | None = None) -> list[list[str]]:
    """The commands of one hooks ``entry``, each as its words: its shell and PowerShell keys, ``command`` (or
    ``exec``) with ``args``, and each value of its ``env`` (:class:`Unread` where one is past a bound or runs
    what its own output sets, :func:`check_commands`). ``given``: the variables the CLI sets (its own win)."""
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
                substituted = substituted_text(text, env, plugin)
                if split is shell_words:
                    check_expansions(text)
                    check_here_documents(text)
                    check_node_stdin(substituted)
                    check_commands(assigned(shell_words(substituted, 2), plugin), root, base, plugin)
                    split_words = assigned(split(substituted, budget=budget), plugin, nested=True)
                    words += [split_words, copied_sources(assigned(shell_words(substituted, 2), plugin), root,
                                                           base, plugin)]
                else:  # awk's, sed's program, as PowerShell's quotes keep it whole
                    check_filters(shell_words(substituted, 2))
                    if key != "command":  # `command` runs in a POSIX shell too, read as its words above
                        check_windows_pipes(substituted)
                    words.append(split(substituted, budget=budget))
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
            check_commands([*shell_words(command_text, 2), *strings], root, base, plugin)
    program = _program(entry.get("exec"), budget)
    if program:  # the CLI's `exec`: a native executable (no shell), then `args`
        words.append([*program, *strings])
    if strings and (isinstance(command_text, str) or program):  # `sh` + ["-c", "python3 -m x"]
        words.append(with_nested(strings, 0, budget))
    budget.spend(len(runner_env))
    for value in runner_env.values():  # `"env": {"CC": "impl/cc"}`: make, a script, runs the value
        if len(value) > MAX_COMMAND_CHARS:
            raise Unread(f"an env value over {MAX_COMMAND_CHARS >> 10} KiB")
        words.append(with_nested([value], 0, budget))
    return words


def _program(value: object, budget: Budget) -> list[str]:
    """The words of an entry's ``exec`` (a string: one word, the executable; a list: its strings)."""
    program = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
        if isinstance(value, list) else []
    budget.spend(len(program))
    if any(len(word) > MAX_COMMAND_CHARS for word in program):
        raise Unread(f"a command over {MAX_COMMAND_CHARS >> 10} KiB")
    return program


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


def _named(words: list[str], root: str, cwd: str, plugin: bool = False, budget: Budget | None = None,
           env: dict[str, str] | None = None) -> list[Target]:
    """The targets inside ``root`` that the command ``words``, run in ``cwd``, names."""
    bases = command_bases(words, root, cwd, plugin)
    loops = literal_loops(words)
    found: list[Target] = []
    script_next = redirected = changes_dir = node_next = False
    for index, word in enumerate(words):
        if budget is not None and not index % 64:  # the run's deadline, between words
            budget.spend(0)
        low = word.lower()
        if redirected:  # `> log.txt`: written, not run
            redirected = False
            continue
        if low in OUTPUT_REDIRECTS:
            redirected = True
            continue
        follows, is_dir, node = script_next, changes_dir, node_next
        changes_dir = low in CHANGE_DIR
        # `pwsh -NoProfile -File x.ps1`: options between an interpreter and its script keep it expected
        script_next = low in INTERPRETERS or os.path.basename(low) in INTERPRETERS or (follows and low[:1] == "-")
        # `node -r x impl/main`: every word after node, to the command's end, is resolved as require does
        node_next = os.path.basename(low) in NODE_RUNNERS or (node and not set(low) <= SEPARATOR)
        if changes_dir or is_dir:
            continue
        for text in word_texts(word, loops, root, cwd, plugin):
            if node and not text.startswith("-") and (text.strip("./\\") == "" or any(c.isalnum() for c in text)):
                # `node impl/check`, `node .`: impl/check.js, ./index.js... as require resolves them
                for candidate in node_files(text, bases, root, budget):
                    found += targets_from(candidate, True, bases, root)
            if text.startswith("-") or not any(char.isalnum() for char in text):  # `&&`, `[`, `!`, `;`
                continue
            named = follows or "/" in text or text.lower().endswith(SCRIPT_SUFFIXES)
            found += targets_from(text, named, bases, root)
            if named and not follows and "*" not in text and runs_python(text, bases, root):  # `./check.py`
                for file in import_files(os.path.dirname(text), text, None, root, bases, budget):
                    found += targets_from(file, True, bases, root)
    for text in runner_files(words, root, cwd, plugin, budget, env):
        found += targets_from(text, True, bases, root)
        found += local_dependencies(text, bases, root, budget)
    return found
