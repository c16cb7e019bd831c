"""What node and its kin (tsx, deno, bun) run: the files their code requires, and code fed on stdin."""
from __future__ import annotations

import json
import os
import re

from ..beneath import read_regular_within
from .bounds import MAX_HOOKS_BYTES, Budget, Unread
from .commands import no_script
from .names import NODE_RUNNERS, NODE_SUFFIXES, SEPARATOR
from .paths import command_bases
from .words import shell_words


def node_files(text: str, bases: list[str], root: str, budget: Budget | None) -> list[str]:
    """The files node (``-r``/``--require``/``--import`` too; tsx, ts-node, deno, bun) may run for ``text``, a
    script named without a suffix, as ``require`` resolves it: ``text.*`` (``.js``, ``.cjs``, ``.json``,
    ``.node``, ``.ts``...) and, as a folder, ``text/package.json``, ``text/index.*`` and its ``main``
    (``main``, ``main.*``, ``main/index.*``, read from the ``package.json`` there now, which is protected itself).
    A ``package.json`` over :data:`MAX_HOOKS_BYTES` is :class:`Unread`."""
    if text.lower().endswith(NODE_SUFFIXES):
        return []
    folder = text.rstrip("/\\") or text[:1]
    if folder != text or os.path.basename(folder) in (".", ".."):  # `.`, `..`, `./`, `x/.`: a folder only
        text = folder
        found = [f"{text}/index.*", f"{text}/package.json"]
    else:
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
_NODE_SPEC = re.compile(r"""["'`]((?:\.{1,2}|)/[^"'`\s]*|\.{1,2})["'`]""")  # a literal `./x`, `../x`, `/x`, `.`, `..`
_NODE_LOADS = re.compile(r"""\b(?:require|import)\s*\(\s*(?!["'`][^"'`$]*["'`]\s*\))|\bchdir\b|createRequire|"""
                         r"""\beval\b|Function\s*\(""")


def check_node_stdin(text: str) -> None:
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
            at = next((n for n, word in enumerate(words) if os.path.basename(word).lower() in NODE_RUNNERS), None)
            if at is None:
                continue
            name = os.path.basename(words[at]).lower()
            if name not in ("node", "nodejs", "node.exe") or no_script("node", words, at + 1, len(words)):
                raise Unread(f"{name} reads its program from a here-document or a here-string, which CodeAct "
                             "does not read; put it in a script file")


def node_code_files(words: list[str], start: int, root: str, cwd: str, plugin: bool,
                     budget: Budget | None) -> list[str]:
    """The files ``node -e``/``-p``/``--eval``/``--print`` (``deno eval``) code (node's, bun's, deno's words from
    ``words[start]``) requires or imports by a literal path (``./x``, ``../x``), as :func:`node_files` resolves
    each, relative to the folder node runs in. :class:`Unread` for code that loads what its literals do not say
    (``require(name)``, ``import(x)``, ``process.chdir``, ``createRequire``, ``eval``)."""
    found: list[str] = []
    bases: list[str] | None = None
    for at in range(start, min(len(words), start + 64)):
        word = words[at]
        if word and set(word) <= SEPARATOR:
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
            bases = command_bases(words, root, cwd, plugin) if bases is None else bases
            found += [spec, *node_files(spec, bases, root, budget)]
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
