"""The paths a command's words name: the folders it changes to, literal loops, variables read as patterns."""
from __future__ import annotations

import itertools
import os
import re

from .bounds import MAX_BASES, Unread
from .matching import GLOB, Target, fold
from .names import CHANGE_DIR, PLUGIN_VARS, PROJECT_VARS, SEPARATOR, SPECIAL
from .words import MAX_BRACES, expand_word, set_names


def word_texts(word: str, loops: dict[str, list[str]], root: str, cwd: str, plugin: bool) -> list[str]:
    """The paths a word may stand for: once per value of a literal loop's variable it holds (``for t in a b; do
    bash impl/$t.sh``), its known variables expanded, others read as a pattern (:func:`as_pattern`); and an
    option's or assignment's value after ``=`` (``--config=./x.py``, ``VAR=./x.sh``)."""
    texts: list[str] = []
    variants = _loop_values(word, loops)
    variants += [part for variant in variants if any(c.isspace() for c in variant) for part in variant.split()]
    for variant in variants or [word]:  # a value with spaces: the words an unquoted one splits into too
        expanded = expand_word(variant, root, cwd, plugin)
        if expanded is None:
            expanded = as_pattern(variant, root, cwd, plugin)
        if expanded is not None:
            texts.append(expanded)
            if "=" in expanded:
                texts.append(expanded.split("=", 1)[1])
    return texts


_VARIABLE_PART = re.compile(r"\$\{[^{}]*\}|\$env:\w+|\$\w+|\$[0-9@*#?!$_-]|%\w+%")


def as_pattern(word: str, root: str, cwd: str, plugin: bool) -> str | None:
    """A path word holding variables not known here as the pattern its known parts make: a variable of the
    environment (``$X``, the user's: taken to stay below the word's folder) read as ``**`` (any text, ``/`` too):
    ``scripts/$X.sh`` is ``scripts/**.sh``; a positional or special parameter (``$1``, ``$@``: a function's
    argument may hold ``..``), or any variable followed by a ``..``, as ``**`` and the word's last name only
    (``**.sh``, from the folder the command runs in). None where no name is left beside them (``$PYTHON``,
    ``$PWD/$f``)."""
    known = (*(PLUGIN_VARS if plugin else PROJECT_VARS), "PWD", "CD")
    if plugin and any(name in word for name in PROJECT_VARS):  # a plugin's hook: the session's folder, not here
        return None

    def marked(match: re.Match[str]) -> str:
        name = re.sub(r"^[${%]+(?:env:)?|[}%]$", "", match[0]).split(":")[0]
        return match[0] if name in known else "\x02" if SPECIAL.fullmatch(match[0]) else "\x00"

    if not any(char.isalnum() for char in _VARIABLE_PART.sub("", word)):
        return None
    expanded = expand_word(_VARIABLE_PART.sub(marked, word), root, cwd, plugin)
    if expanded is None:
        return None
    tail = re.split(r"[\x00\x02]", expanded)[-1]
    if "\x02" in expanded or ".." in re.split(r"[/\\]", tail):  # may climb anywhere: the last name only
        return "**" + re.split(r"[/\\]", tail)[-1]
    return expanded.replace("\x00/", "\x00").replace("\x00", "**")


def literal_loops(words: list[str]) -> dict[str, list[str]]:
    """The variables of the command's loops over a literal list (``for t in lint run; do``) and their values: of
    a name no other loop and no other word sets (``t=x``, ``read t``, ``((t++))``: :func:`_mentions`)."""
    loops: dict[str, list[str]] = {}
    heads = [words[index + 1] for index, word in enumerate(words[:-1]) if word == "for"]
    others = set_names(words)
    for index, word in enumerate(words[:-2]):
        if word == "for" and words[index + 2] == "in" and words[index + 1].isidentifier() and \
                heads.count(words[index + 1]) == 1 and words[index + 1] not in others:
            values = list(itertools.takewhile(lambda w: w not in ("do", ";", "\n") and not set(w) <= SEPARATOR,
                                              words[index + 3:index + 3 + MAX_BRACES + 1]))
            if values and len(values) <= MAX_BRACES and not any("$" in w or "`" in w or set(w) & GLOB
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


def glob_escaped(path: str) -> str:
    """``path`` with the characters a glob reads (``*?[``) matched as themselves."""
    return re.sub(r"([*?[])", r"[\1]", path)


def command_bases(words: list[str], root: str, cwd: str, plugin: bool) -> list[str]:
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
            expanded = expand_word(given, root, cwd, plugin) if "`" not in given else None  # `cd "`echo x`"`
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
        env = (env and not set(word) <= SEPARATOR) or os.path.basename(low) == "env"
        after_cd = low in CHANGE_DIR or (env and folder == "")  # `env -C dir cmd` (GNU env)
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


def targets_from(text: str, named: bool, bases: list[str], root: str) -> list[Target]:
    """The targets inside ``root`` that the path ``text`` stands for, read from each of ``bases`` (a Python
    start's surface where ``text`` begins with :data:`FRESH`)."""
    fresh = text.startswith(FRESH)
    text = text.removeprefix(FRESH)
    found: list[Target] = []
    for base in bases:
        target = os.path.normpath(os.path.join(base, text))
        if target == root or not target.startswith(root.rstrip(os.sep) + os.sep):
            continue
        glob = any(char in GLOB for char in target[len(root):])  # `./x/*.sh`, or from a `cd im*` folder
        key = fold(target)
        if glob:  # `./scripts/*.sh`: the shell runs every match; the repository's own path matched as text
            top = fold(root)
            key = re.sub(r"([*?[])", r"[\1]", top) + key[len(top):]
        found.append(Target(target, key, named, glob, fresh))
    return found


FRESH = "\x01"  # marks a path of a Python start's surface (no path holds it)
