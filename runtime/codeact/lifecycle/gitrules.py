"""What git itself says about a stamp (issue 42): owned files the repository's ignore rules hide from `git add`,
and whether a repo-scope destination is the repository's top level.

A `.gitignore` rule `bin` or `bin/` (Go, Java, .NET; pytest has `bin/`) hides `.codeact/bin/`: `git add -A` leaves
the launcher out silently and every clone gets exit 127. The stamped `.codeact/.gitignore` re-includes what the
folder must commit; this module finds what is still hidden (a rule that hides `.codeact/` itself, or a rule
against an owned file elsewhere) with `git check-ignore -v`, which names the rule.
"""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from ..layout import CLI_SETTINGS, NOT_RENDERED, for_scope, scope_of


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False, timeout=60)


def _owned_files(project: Path) -> list[str]:
    """The owned files present in ``project`` (POSIX, relative), without the machine-local ones."""
    layout = for_scope(scope_of(project))
    found = []
    for item in layout.owned:
        path = project / item.rstrip("/")
        if item.endswith("/") and path.is_dir() and not path.is_symlink():
            found += [p.relative_to(project).as_posix() for p in path.rglob("*") if p.is_file() or p.is_symlink()]
        elif path.is_file():
            found.append(item)
    return sorted(rel for rel in found if rel != CLI_SETTINGS and not any(
        rel == n or (n.endswith("/") and rel.startswith(n)) for n in NOT_RENDERED)
        and "__pycache__/" not in rel and not rel.endswith(".pyc"))


def ignored_owned(project: Path) -> list[tuple[str, str]]:
    """``(path, rule)`` for each untracked owned file git would leave out of `git add -A`; ``rule`` is
    ``source:line: pattern`` as `git check-ignore -v` names it. Empty outside a git work tree."""
    files = _owned_files(project)
    if not files:
        return []
    done = _git(project, "check-ignore", "-v", "-z", "--stdin", stdin=b"\0".join(f.encode() for f in files))
    if done.returncode not in (0, 1):
        return []
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    found = []
    for i in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[i:i + 4]
        if source and not pattern.startswith("!"):
            found.append((path, f"{source}:{line}: {pattern}"))
    return found


def ignored_fix(path: str, rule: str) -> str:
    """What to do about ``path`` hidden by ``rule``."""
    source = rule.split(":", 1)[0]
    return (f"git leaves it out of every commit ({rule}); re-include it: add `!/{path}` to {source} (or make "
            f"the rule narrower, e.g. `/bin/` for the root's bin only), then `git add -- {shlex.quote(path)}`")


def top_level(folder: Path) -> Path | None:
    """The git top level of ``folder`` (or of its nearest existing parent), or None outside a work tree."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    done = _git(probe if probe.is_dir() else probe.parent, "rev-parse", "--show-toplevel")
    return Path(done.stdout.decode().strip()).resolve() if done.returncode == 0 and done.stdout.strip() else None


def repo_root_error(dst: Path) -> str:
    """Why a repo-scope copy into ``dst`` is refused ("" when it is not): ``dst`` lies below the git top level,
    where the Copilot CLI never reads ``.github/``. Says the command that works."""
    dst = dst.expanduser().resolve()
    top = top_level(dst)
    if top is None or top == dst:
        return ""
    argv = sys.argv
    source = argv[-2] if len(argv) >= 3 and "copy" in argv[1:-2] else "TEMPLATE"
    return (f"the destination {dst} is a subfolder of the git repository {top}: in repo scope CodeAct lives at the "
            "repository's top level, the only place the Copilot CLI reads .github/ and the launcher is looked for; "
            f"run the copy there: cd {shlex.quote(str(top))} && copier copy --trust {shlex.quote(source)} .")
