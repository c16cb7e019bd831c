"""`codeact drift`: does this repository still match what the template, its answers and the MCP config produce?

Checks, each reported per file: hand-edited or deleted template-owned files (by rendering the recorded template
version with the recorded answers into a temporary folder — the working tree is never modified), conflict markers,
``.rej`` files and unmerged paths left by ``copier update``, and a tool lock that no longer matches the configured
MCP servers. Seeded files are never drift. Which files are owned or seeded depends on the scope recorded in the
answers file (layout.py); global and plugin installs have no tool lock (MCP tools are not in their sandbox yet).
Exit 0 in sync, 1 drift, 2 usage/setup error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import EXIT_OK, EXIT_PROGRAM_ERROR, CodeactError, ConfigError
from .layout import ANSWERS_FILE, LOCK_FILE, NOT_RENDERED, for_scope, scope_of
from .policy import find_workspace

_MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
COPIER_FIX = ("install Copier with its extension loader: `uv tool install copier --with copier-template-extensions` "
              "(or `pipx install copier && pipx inject copier copier-template-extensions`)")


@dataclass(frozen=True)
class Drift:
    kind: str  # edited | deleted | conflict | rejected | unmerged | stale-lock | newer-template
    path: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


def _git_files(project: Path, *args: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", *args], cwd=project, capture_output=True, check=False)
    return [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]


def conflict_leftovers(project: Path) -> list[Drift]:
    """Conflict markers in owned files, `.rej` files and unmerged paths: Copier exits 0 on all of them."""
    layout = for_scope(scope_of(project))
    found: list[Drift] = []
    unmerged = sorted({line.split("\t", 1)[1] for line in subprocess.run(
        ["git", "ls-files", "-u"], cwd=project, capture_output=True, text=True, check=False).stdout.splitlines()
        if "\t" in line})
    found += [Drift("unmerged", p, "git reports an unmerged path; resolve it and `git add` it") for p in unmerged]
    files = _git_files(project, "-co", "--exclude-standard")
    found += [Drift("rejected", p, "a hunk Copier could not apply; merge it by hand, then delete the file")
              for p in files if p.endswith(".rej")]
    for rel in files:
        if not layout.is_owned(rel) or rel in unmerged:
            continue
        try:
            text = (project / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        match = _MARKER.search(text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            found.append(Drift("conflict", rel, f"conflict marker at line {line}; resolve it"))
    return found


def render_expected(project: Path, copier: str) -> Path:
    """Render the recorded template version with the recorded answers into a temporary folder."""
    tmp = Path(tempfile.mkdtemp(prefix="codeact-drift-"))
    for rel in (ANSWERS_FILE, LOCK_FILE):
        if (project / rel).is_file():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / rel, tmp / rel)
    env = {**os.environ, "GIT_AUTHOR_NAME": "codeact", "GIT_AUTHOR_EMAIL": "codeact@localhost",
           "GIT_COMMITTER_NAME": "codeact", "GIT_COMMITTER_EMAIL": "codeact@localhost"}
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True, env=env)
    result = subprocess.run(
        [copier, "recopy", "--trust", "--skip-tasks", "--defaults", "--overwrite", "--quiet",
         "--vcs-ref=:current:", "-a", ANSWERS_FILE, "."],
        cwd=tmp, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConfigError("could not render the recorded template version: "
                          + (result.stderr.strip().splitlines() or ["copier failed"])[-1])
    return tmp


def rendered_differences(project: Path, expected: Path) -> list[Drift]:
    layout = for_scope(scope_of(project))
    found = []
    for path in sorted(p for p in expected.rglob("*") if p.is_file() and ".git" not in p.relative_to(expected).parts):
        rel = path.relative_to(expected).as_posix()
        if layout.is_seeded(rel) or any(rel == n or (n.endswith("/") and rel.startswith(n)) for n in NOT_RENDERED):
            continue
        mine = project / rel
        if not mine.exists():
            found.append(Drift("deleted", rel, "owned by the template but missing; `copier update` or "
                                               "`copier recopy` restores it"))
        elif mine.read_bytes() != path.read_bytes():
            found.append(Drift("edited", rel, "differs from what the template renders; move your change to "
                                              "codeact.local.instructions.md or the template, then restore it"))
    return found


def stale_lock(project: Path) -> list[Drift]:
    """The tool lock against the configured MCP servers, without starting any server."""
    try:
        from .mcp.discovery import check_lock
    except ImportError:
        return []
    try:
        return [Drift("stale-lock", LOCK_FILE, difference) for difference in check_lock(project)]
    except CodeactError as exc:  # e.g. settings.json holds conflict markers: report it, keep checking the rest
        return [Drift("unreadable", LOCK_FILE, f"cannot compare the MCP configuration with the lock: {exc}")]


def live_lock(project: Path) -> list[Drift]:
    """Re-discover every server (starts them) and compare their tools with the lock."""
    from .mcp.discovery import check_lock_live
    return [Drift("stale-lock", LOCK_FILE, difference) for difference in check_lock_live(project)]


def newer_template(project: Path, copier: str) -> list[Drift]:
    result = subprocess.run([copier, "check-update", "--quiet", "-a", ANSWERS_FILE], cwd=project,
                            capture_output=True, text=True)
    if result.returncode == 2:
        return [Drift("newer-template", ANSWERS_FILE, "a newer template version exists; run "
                                                      "`copier update -a .codeact/.copier-answers.yml --trust`")]
    return []


def check(project: Path, *, live: bool = False, check_newer: bool = False, copier: str | None = None) -> list[Drift]:
    """Every drift of ``project``; raises :class:`ConfigError` when the check itself cannot run."""
    if not (project / ANSWERS_FILE).is_file():
        raise ConfigError(f"{ANSWERS_FILE} not found in {project}: this is not a codeact-stamped repository")
    copier = copier or shutil.which("copier")
    if not copier:
        raise ConfigError(f"`copier` is not on PATH; {COPIER_FIX}")
    found = conflict_leftovers(project)
    expected = render_expected(project, copier)
    try:
        found += rendered_differences(project, expected)
    finally:
        shutil.rmtree(expected, ignore_errors=True)
    if scope_of(project) == "repo":
        found += live_lock(project) if live else stale_lock(project)
    if check_newer:
        found += newer_template(project, copier)
    return found


def main(args: argparse.Namespace) -> int:
    project = find_workspace(args.workspace)
    drifts = check(project, live=args.live, check_newer=args.check_newer)
    if args.json:
        print(json.dumps({"ok": not drifts, "drift": [d.to_json() for d in drifts]}, indent=2))
    elif drifts:
        print(f"codeact drift: {len(drifts)} problem(s) in {project.name}:")
        for d in drifts:
            print(f"  {d.kind:<14} {d.path}\n  {'':<14} {d.detail}")
    else:
        print("codeact drift: in sync with the template, its answers and the MCP configuration")
    sys.stdout.flush()
    return EXIT_PROGRAM_ERROR if drifts else EXIT_OK
