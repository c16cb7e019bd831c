"""What a hook's Python start runs: its script or module, and what it imports before the standard library
(:mod:`.pyimports`)."""
from __future__ import annotations

import os
import re

from ..beneath import read_regular_within
from . import pyimports
from .bounds import MAX_BASES, MAX_HOOKS_BYTES, Budget, Unread
from .names import SEPARATOR
from .paths import FRESH, command_bases, glob_escaped
from .words import expand_word


def python_files(words: list[str], start: int, pythonpath: str | None, root: str, cwd: str, plugin: bool,
                  budget: Budget | None = None) -> list[str]:
    """The files ``python ...`` (its options from ``words[start]`` on) may run first: ``-m a.b``'s files in the
    folder it runs in and in each folder of ``PYTHONPATH``, a script folder's (or zip's) ``__main__.py``,
    ``sitecustomize.py``, ``usercustomize.py`` in each folder of ``PYTHONPATH``, and what it imports from the
    folder first on its path (:func:`import_files`: the script's, or for ``-c``/``-m`` the one it runs in)."""
    start_kind, given, isolated = read_python_start(words, start)
    found: list[str] = []
    for folder in ["", *[part for part in re.split(r"[:;]", pythonpath or "") if part][:MAX_BASES]]:
        expanded = expand_word(folder, root, cwd, plugin) if folder else ""
        if expanded is None:
            continue
        if folder:  # every Python start imports these from a PYTHONPATH folder, whatever it runs
            found += [os.path.join(expanded, "sitecustomize.py"), os.path.join(expanded, "usercustomize.py")]
        if start_kind == "script":  # a folder or zip runs its __main__.py
            if not given.lower().endswith((".py", ".pyw")) and not folder:
                found.append(os.path.join(given, "__main__.py"))
        elif start_kind == "module":
            found += [os.path.join(expanded, file) for file in _module_files(given)]
    script = expand_word(given, root, cwd, plugin) if start_kind in ("script", "stdin") else None
    code = given if start_kind == "code" else f"import {given}" if start_kind == "module" else None
    bases = command_bases(words, root, cwd, plugin)
    firsts: list[str | None] = ["" if start_kind in ("code", "module", "stdin") and not isolated else None]
    if start_kind == "script" and script is not None:  # its folder (a folder python runs: itself), as it is named
        firsts = [script if any(os.path.isdir(os.path.join(base, script)) for base in bases)  # and as it resolves
                  else os.path.dirname(script), *_real_folders(script, bases, root)]
    for folder in [*firsts, *[expand_word(part, root, cwd, plugin) for part in re.split(r"[:;]", pythonpath or "")
                              if part][:MAX_BASES]]:  # PYTHONPATH's folders come before the standard library too
        found += import_files(folder, script, code, root, bases, budget)
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


def read_python_start(words: list[str], start: int) -> tuple[str, str, bool]:
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
        if set(word) <= SEPARATOR:
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


def import_files(folder: str | None, script: str | None, code: str | None, root: str, bases: list[str],
                  budget: Budget | None) -> list[str]:
    """What a Python start imports from ``folder`` (relative to the folders it may run in, ``bases``; None: not on
    its path), a folder of its path before the standard library (:func:`codeact.core.hookruns.pyimports.follow`): its
    surface (marked :data:`FRESH`), and every file of each name ``script`` (a file, read from each base) or
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
    escaped = glob_escaped(folder)
    linked = [os.path.realpath(path) for base in bases for pattern in followed.whole if pattern.endswith(".*")
              if os.path.islink(path := os.path.join(base, folder, pattern[:-2] + ".py"))]  # helper.py -> shared/
    return [FRESH + os.path.join(escaped, pattern) for pattern in followed.surface] + \
        [os.path.join(escaped, pattern) for pattern in followed.whole] + \
        [path for path in linked if path.startswith(os.path.realpath(root) + os.sep)]


def _module_source(file: str, root: str, budget: Budget | None) -> bytes | None:
    """The text of the Python file ``file`` (a regular file inside ``root``) up to :data:`MAX_HOOKS_BYTES`, or
    None where it is missing (one larger is :data:`codeact.core.hookruns.pyimports.TOO_LARGE`: not known). Read each time:
    a hooks file's answer that depends on it is not cached."""
    if budget is not None:
        budget.read = True
        budget.spend(0)
    read = read_regular_within(os.path.normpath(file), os.path.realpath(root), MAX_HOOKS_BYTES)
    if read is None:
        return None
    return read[0] if len(read[0]) <= MAX_HOOKS_BYTES else pyimports.TOO_LARGE


_SHELL_EXECS_PYTHON = re.compile(rb"^[\s'\"]*exec\b[^\n]*python", re.MULTILINE)  # sh/Python polyglots


def runs_python(script: str, bases: list[str], root: str) -> bool:
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


def _module_files(module: str) -> list[str]:
    """The files ``python -m module`` may run first, relative to a folder of ``sys.path``."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return []
    path = "/".join(parts)
    packages = ("/".join(parts[:n]) + "/__init__.py" for n in range(1, len(parts) + 1))
    return [f"{path}.py", f"{path}/__main__.py", *packages]
