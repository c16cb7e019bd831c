"""`codeact drift`: does this repository still match what the template, its answers and the MCP config produce?

Checks, each reported per file: hand-edited or deleted template-owned files (by rendering the recorded template
version with the recorded answers into a temporary folder — the working tree is never modified), conflict markers,
``.rej`` files and unmerged paths left by ``copier update``, files inside a folder the template owns that it does not
render there (tracked, or untracked and not ignored), answers that break the organisation's ``codeact-policy.yml``
(orgpolicy.py), and a tool lock that no longer matches the configured MCP servers. Seeded files are never drift. Which files are owned or seeded depends on the scope recorded in the
answers file (layout.py); global and plugin installs have no tool lock (MCP tools are not in their sandbox yet).
Exit 0 in sync, 1 drift, 2 usage/setup error.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodeactError, ConfigError
from ..layout import ANSWERS_FILE, LOCK_FILE, NOT_RENDERED, UPDATE_COMMAND, answers_file, for_scope, scope_of

_MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
# Restores every template-owned file of the recorded version (hand edits to them are lost; seeded files are kept).
RECOPY_COMMAND = f"copier recopy -a {ANSWERS_FILE} --trust --defaults --overwrite --skip-tasks --vcs-ref=:current:"
COPIER_FIX = ("install Copier with its extension loader: `uv tool install copier --with copier-template-extensions` "
              "(or `pipx install copier && pipx inject copier copier-template-extensions`)")


@dataclass(frozen=True)
class Drift:
    kind: str  # edited | deleted | extra | conflict | rejected | unmerged | policy | source | unrendered | stale-lock
    # | newer-template | unreadable | ignored | mode | link | interrupted
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


_SRC_LINE = re.compile(r"^_src_path:.*$", re.M)


def _answers_copy(project: Path, source: str | None) -> Path:
    """A temporary folder holding the answers file and the lock, for Copier to run in (never the repository: Copier
    reads a relative ``_src_path`` against the folder it runs in). ``_src_path`` is ``source`` when given (the
    organisation's template), else the recorded one; a local source is written as the real folder
    :func:`~.orgpolicy.template_folder` checked (outside the repository), so Copier reads exactly that folder."""
    from .orgpolicy import load_answers, template_folder

    tmp = Path(tempfile.mkdtemp(prefix="codeact-drift-"))
    recorded = answers_file(project)
    try:
        for rel in (recorded, LOCK_FILE):
            if (project / rel).is_file():
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(project / rel, tmp / rel)
        answers = tmp / recorded
        text = answers.read_text(encoding="utf-8")
        src = source or load_answers(text).get("_src_path")
        folder = template_folder(src, project) if isinstance(src, str) else None
        if folder is not None or source:
            line = f"_src_path: {json.dumps(str(folder) if folder is not None else source)}"
            answers.write_text(_SRC_LINE.sub(lambda _m: line, text, count=1) if _SRC_LINE.search(text)
                               else f"{line}\n{text}", encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def render_expected(project: Path, copier: str, source: str | None = None) -> Path:
    """Render the recorded template version with the recorded answers into a temporary folder: from ``source``
    when given (the organisation's template, whatever ``_src_path`` the repository records), else ``_src_path``."""
    from .orgpolicy import OWN_GIT_ENV

    tmp = _answers_copy(project, source)
    recorded = answers_file(project)
    env = {**OWN_GIT_ENV, "GIT_AUTHOR_NAME": "codeact", "GIT_AUTHOR_EMAIL": "codeact@localhost",
           "GIT_COMMITTER_NAME": "codeact", "GIT_COMMITTER_EMAIL": "codeact@localhost"}
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True, env=env)
    result = subprocess.run(
        [copier, "recopy", "--trust", "--skip-tasks", "--defaults", "--overwrite", "--quiet",
         "--vcs-ref=:current:", "-a", recorded, "."],
        cwd=tmp, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConfigError("could not render the recorded template version: "
                          + (result.stderr.strip().splitlines() or ["copier failed"])[-1])
    return tmp


def _not_rendered(rel: str) -> bool:
    return any(rel == n or (n.endswith("/") and rel.startswith(n)) for n in NOT_RENDERED)


def restore_command(project: Path, rel: str, expected: Path) -> str:
    """A command that gives back the template's ``rel``: from HEAD when HEAD holds exactly that (as git stores it:
    a ``*.ps1`` rendered with CRLF is committed with LF under the owned .gitattributes), else a recopy."""
    head = subprocess.run(["git", "rev-parse", "-q", "--verify", f"HEAD:./{rel}"], cwd=project, capture_output=True,
                          text=True, check=False)
    if head.returncode == 0 and head.stdout.strip() == _blob_id(project, rel, expected):
        return f"git restore --source=HEAD --staged --worktree -- {shlex.quote(rel)}"
    return f"{RECOPY_COMMAND} (commit first; then `git status` shows what it restored)"


def rendered_differences(project: Path, expected: Path) -> list[Drift]:
    """Owned files that are edited, deleted, or (inside an owned folder) not rendered by the template at all."""
    layout = for_scope(scope_of(project))
    found = []
    rendered = set()
    for path in sorted(p for p in expected.rglob("*") if p.is_file() and ".git" not in p.relative_to(expected).parts):
        rel = path.relative_to(expected).as_posix()
        rendered.add(rel)
        if layout.is_seeded(rel) or _not_rendered(rel):
            continue
        mine = project / rel
        if _linked(project, rel):
            found.append(Drift("link", rel, "a symbolic link (or under one) where the template renders a file: it "
                                            "reads differently on every machine; restore it with: "
                                            + restore_command(project, rel, path)))
        elif not mine.exists():
            found.append(Drift("deleted", rel, "owned by the template but missing; restore it with: "
                                               + restore_command(project, rel, path)))
        elif mine.read_bytes() != path.read_bytes() and not _same_blob(project, rel, mine, path):
            found.append(Drift("edited", rel, "differs from what the template renders; move your change to "
                                              "codeact.local.instructions.md or the template, then restore it: "
                                              + restore_command(project, rel, path)))
        elif os.access(path, os.X_OK) and _index_mode(project, rel) == "100644":
            found.append(Drift("mode", rel, "committed without its executable bit (a fresh clone cannot run it: "
                                            f"exit 126); fix: git update-index --chmod=+x -- {shlex.quote(rel)} "
                                            "&& git commit"))
    folders = tuple(item for item in layout.owned if item.endswith("/"))
    tracked = set(_git_files(project, "-c", "--", *folders))
    for rel in sorted(set(_git_files(project, "-co", "--exclude-standard", "--", *folders))):
        if rel in rendered or _not_rendered(rel) or rel.endswith(".rej") or layout.is_seeded(rel):
            continue
        if (project / rel).is_file() or (project / rel).is_symlink():
            remove = f"git rm -f -- {shlex.quote(rel)}" if rel in tracked else f"rm -- {shlex.quote(rel)}"
            found.append(Drift("extra", rel, "inside a folder the template owns, but the template does not render "
                                             f"it; delete it (`{remove}`) or move it out of that folder"))
    return found


def _linked(project: Path, rel: str) -> bool:
    """Whether ``rel`` or a folder above it inside ``project`` is a symbolic link (what it reads is not committed:
    a link to the CI runner's checkout reads the rendered bytes there and dangles in every clone)."""
    part = project
    for name in rel.split("/"):
        part = part / name
        if part.is_symlink():
            return True
    return False


def _same_blob(project: Path, rel: str, mine: Path, expected: Path) -> bool:
    """Whether git would store the same content for both (its line-ending rules for ``rel`` applied to each): a
    clone with core.autocrlf=true holds CRLF in the working tree and still commits the template's bytes."""
    theirs = _blob_id(project, rel, expected)
    return bool(theirs) and _blob_id(project, rel, mine) == theirs


def _blob_id(project: Path, rel: str, file: Path) -> str:
    """The blob id git would store for ``file`` committed as ``rel`` (its line-ending rules applied); "" on error."""
    done = subprocess.run(["git", "hash-object", f"--path={rel}", str(file)], cwd=project, capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def _index_mode(project: Path, rel: str) -> str:
    listed = subprocess.run(["git", "ls-files", "-s", "--", rel], cwd=project, capture_output=True, text=True,
                            check=False).stdout.split()
    return listed[0] if listed else ""


def policy_drift(project: Path, policy_from: str | None) -> list[Drift]:
    """Answers that break the organisation's policy: of the recorded template version, or of ``policy_from``."""
    from .orgpolicy import fetch_policy, load_answers, same_source

    recorded = answers_file(project)
    answers = load_answers((project / recorded).read_text(encoding="utf-8"))
    src, commit = answers.get("_src_path"), answers.get("_commit")
    found = []
    if policy_from:
        if not isinstance(src, str) or not same_source(src, policy_from):
            found.append(Drift("source", recorded, f"_src_path is {src!r}, not the organisation's template "
                                                       f"{policy_from}; move to it, keeping the answers: copier copy --trust "
                                                       f"--defaults --overwrite -a {recorded} {policy_from} ."))
        policy = fetch_policy(policy_from, None, project)
    elif isinstance(src, str) and isinstance(commit, str):
        policy = fetch_policy(src, commit, project)
    else:
        return found
    for name, why in policy.violations(answers):
        fix = f"{UPDATE_COMMAND} -d {shlex.quote(name + '=' + _cli_value(policy.default(name, answers[name])))}"
        found.append(Drift("policy", recorded, f"answer '{name}': {why}; put the policy's value back with "
                                                   f"`{fix}` (a plain `{UPDATE_COMMAND}` takes the policy's "
                                                   "default)"))
    return found


def _policy_drift_or_offline(project: Path, policy_from: str | None, may_skip: bool) -> list[Drift]:
    """:func:`policy_drift`; nothing where ``may_skip`` (a local check, offline) and the template is unreachable."""
    from .orgpolicy import UntrustedSourceError

    try:
        return policy_drift(project, policy_from)
    except UntrustedSourceError:
        return []  # never read; provenance.source_errors reports the same source (the same check) as drift
    except ConfigError as exc:
        if not (may_skip and "cannot read the template" in str(exc)):
            raise
    return []


def _unrendered_move(moved: Drift, unverified: list[str]) -> Drift:
    """The policy check's ``source`` finding, saying why nothing was rendered (the move command stays last)."""
    head, sep, move = moved.detail.partition("; move to it")
    why = "; ".join(unverified)
    return Drift(moved.kind, moved.path, f"{head} ({why}; the template was not rendered, so the owned files are "
                                         f"unchecked until the move){sep}{move}")


def _cli_value(value: object) -> str:
    """``value`` as Copier's ``-d NAME=VALUE`` parses it (YAML: a list as a JSON flow list, booleans lower-case)."""
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _refresh_fix(project: Path) -> str:
    """The command that rewrites the lock, as a person pastes it (the launcher's full path: `codeact` is not on
    PATH)."""
    launcher = project / for_scope(scope_of(project)).project_launcher
    return f"; fix: {shlex.quote(str(launcher))} refresh, then commit {LOCK_FILE} and the files it rewrote"


def stale_lock(project: Path) -> list[Drift]:
    """The tool lock against the configured MCP servers, without starting any server."""
    try:
        from ..mcp.discovery import check_lock
    except ImportError:
        return []
    try:
        return [Drift("stale-lock", LOCK_FILE, difference + _refresh_fix(project))
                for difference in check_lock(project)]
    except CodeactError as exc:  # e.g. settings.json holds conflict markers: report it, keep checking the rest
        return [Drift("unreadable", LOCK_FILE, f"cannot compare the MCP configuration with the lock: {exc}")]


def live_lock(project: Path) -> list[Drift]:
    """Re-discover every server (starts them) and compare their tools with the lock."""
    from ..mcp.discovery import check_lock_live
    return [Drift("stale-lock", LOCK_FILE, difference + _refresh_fix(project))
            for difference in check_lock_live(project)]


def newer_template(project: Path, copier: str, source: str | None = None) -> list[Drift]:
    """Whether the source has a newer version, asked of Copier in a copy of the answers (:func:`_answers_copy`)."""
    from .orgpolicy import OWN_GIT_ENV

    tmp = _answers_copy(project, source)
    try:
        result = subprocess.run([copier, "check-update", "--quiet", "-a", answers_file(project)], cwd=tmp,
                                capture_output=True, text=True, env=OWN_GIT_ENV)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if result.returncode == 2:
        return [Drift("newer-template", answers_file(project), f"a newer template version exists; run `{UPDATE_COMMAND}`")]
    return []


def _local_checks(project: Path, live: bool) -> list[Drift]:
    """What needs no template: owned files hidden by the ignore rules, and the tool lock."""
    from .gitrules import ignored_fix, ignored_owned

    found = [Drift("ignored", path, ignored_fix(path, rule)) for path, rule in ignored_owned(project)]
    if scope_of(project) == "repo":
        found += live_lock(project) if live else stale_lock(project)
    return found


def check(project: Path, *, live: bool = False, check_newer: bool = False, copier: str | None = None,
          policy_from: str | None = None, base: str | None = None, notes: list[str] | None = None) -> list[Drift]:
    """Every drift of ``project``; raises :class:`ConfigError` when the check itself cannot run. The template is
    rendered only when its source and version are verified against ``base`` (provenance.py; by default
    :func:`~codeact.lifecycle.provenance.local_base`). Outside CI (no
    ``CI`` variable) an unreachable template is skipped with a line in ``notes`` (the pre-commit hook works
    offline); in CI it fails the check."""
    if not (project / answers_file(project)).is_file():
        raise ConfigError(f"{ANSWERS_FILE} not found in {project}: this is not a codeact-stamped repository")
    from .interrupted import interrupted

    cut_short = interrupted(project)
    if cut_short:  # the owned files are half-written: per-file advice would mislead
        return [Drift("interrupted", answers_file(project), cut_short)]
    copier = copier or shutil.which("copier")
    if not copier:
        raise ConfigError(f"`copier` is not on PATH; {COPIER_FIX}")
    found = conflict_leftovers(project)
    from .provenance import UNREACHABLE, local_base, source_errors

    may_skip = notes is not None and not os.environ.get("CI") and not policy_from
    unverified = source_errors(project, base or local_base(project), policy_from)
    # An unverified source is not read at all, not even its policy: git on a folder or URL a pull request names
    # runs what that repository configures.
    if policy_from or not unverified:
        found += _policy_drift_or_offline(project, policy_from, may_skip)
    if unverified and notes is not None and may_skip and all(why.startswith(UNREACHABLE) for why in unverified):
        notes.append(f"skipped the owned files: {unverified[0]} (offline?); conflicts, ignored files and the tool "
                     "lock were checked")
        return found + _local_checks(project, live)
    if unverified and policy_from and any(d.kind == "source" for d in found):
        # The policy check already names the other template and the move that fixes both: one finding, not two.
        return [_unrendered_move(d, unverified) if d.kind == "source" else d for d in found]
    if unverified:
        return found + [Drift("source", answers_file(project), why + "; the template was not rendered, so the "
                              "owned files are unchecked") for why in unverified]
    try:
        expected = render_expected(project, copier, policy_from)
    except ConfigError as exc:
        if not policy_from:
            raise
        # The organisation's template cannot render what the repository records (e.g. a version it never had):
        # nothing of the repository's can be trusted as the template's, so that alone fails the check.
        return found + [Drift("unrendered", answers_file(project), f"{exc} from the organisation's template {policy_from}; "
                                                          "the launcher, runtime, hooks and instructions are "
                                                          "unchecked until the repository records a version of it")]
    try:
        found += rendered_differences(project, expected)
    finally:
        shutil.rmtree(expected, ignore_errors=True)
    found += _local_checks(project, live)
    if notes is not None:
        from .update import missing_seeded

        notes += [f"{rel} is missing (yours, never drift, and no update re-creates it); get it back: {fix}"
                  for rel, fix in missing_seeded(project)]
    if check_newer:
        found += newer_template(project, copier, policy_from)
    return found
