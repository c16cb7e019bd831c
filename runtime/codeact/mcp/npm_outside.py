"""The user's own MCP servers take no npm package, and no npm setting, from the workspace.

``npx`` (``npm exec``) looks for what it runs in its project, the nearest folder at or above its working folder that
holds a ``package.json`` or ``node_modules``, before the registry: a ``package.json`` whose ``bin`` has the command's
name, a package in ``node_modules``, and settings that run commands (``.npmrc``'s ``node-options``,
``script-shell``). The user's servers start in the workspace, as the Copilot CLI starts them, where a program may
have written such files. npm takes its project from ``--prefix`` alone (not from the environment), so the user's
servers get that argument, naming an empty folder in CodeAct's cache; the server still runs in the workspace:

- a command that names ``npx`` or ``npm`` by its path gets ``--prefix`` in its arguments;
- by name, whatever starts it (``sh -c``, ``env``, a script of the user's), ``npx`` and ``npm`` are found first on
  ``PATH`` as shims in CodeAct's cache that add ``--prefix`` (npm: to ``exec``, ``exe`` and ``x``) and run the real
  ones.

POSIX only: on Windows the arguments and ``PATH`` are left as they are.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

EXEC_COMMANDS = ("exec", "exe", "x")  # npm's exec command, as npm takes it


def outside(command: str, args: list[str], env: dict[str, str]) -> list[str]:
    """``args`` with ``--prefix`` first where ``command`` is ``npx`` or ``npm exec`` by path; ``env``'s ``PATH``
    led by the shims (changed in place). Anything else unchanged. A ``--prefix`` of the entry's own comes later, so
    npm takes it where npm reads it (before the package; one after it is the server's own option)."""
    if os.name != "posix":
        return args
    folder = _folder(env)
    prefix = folder / "prefix"
    name = os.path.basename(command)
    shims = _shims(folder, prefix, env.get("PATH", os.defpath))
    if shims is not None:
        env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', os.defpath)}"
    if "/" in command and (name == "npx" or (name == "npm" and any(arg in EXEC_COMMANDS for arg in args))):
        return ["--prefix", str(prefix), *args]
    return args


def _folder(environ: Mapping[str, str]) -> Path:
    from ..paths import codeact_cache_dir

    return codeact_cache_dir(environ) / "npm-outside"


def _shims(folder: Path, prefix: Path, path: str) -> Path | None:
    """The folder of ``npx`` and ``npm`` shims for the real ones on ``path`` (written once, then reused), or None
    when neither is there or the cache cannot be written."""
    import shutil

    theirs = os.pathsep.join(entry for entry in path.split(os.pathsep)  # never a shim's own folder: it would
                             if not entry.startswith(f"{folder}{os.sep}"))  # run itself
    real = {name: shutil.which(name, path=theirs) for name in ("npx", "npm")}
    scripts = {name: _script(name, found, prefix) for name, found in real.items() if found}
    if not scripts:
        return None
    key = hashlib.sha256(repr(sorted(scripts.items())).encode()).hexdigest()[:16]
    shims = folder / key
    try:
        prefix.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not all((shims / name).is_file() for name in scripts):
            shims.mkdir(mode=0o700, parents=True, exist_ok=True)
            for name, text in scripts.items():
                staged = shims / f".{name}.{os.getpid()}"
                staged.write_text(text, encoding="utf-8")
                staged.chmod(0o700)
                os.replace(staged, shims / name)  # another start may write the same file meanwhile
    except OSError:
        return None
    return shims


def _script(name: str, real: str, prefix: Path) -> str:
    run, given = shlex.quote(real), shlex.quote(str(prefix))
    head = f"#!/bin/sh\n# CodeAct: {name} with --prefix outside the workspace (codeact/mcp/npm_outside.py)\n"
    if name == "npx":
        return head + f'exec {run} --prefix {given} "$@"\n'
    cases = "|".join(EXEC_COMMANDS)
    return head + (f'for arg in "$@"; do\n    case $arg in {cases}) exec {run} --prefix {given} "$@";; esac\n'
                   f'done\nexec {run} "$@"\n')
