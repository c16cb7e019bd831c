"""Whether the template source an answers file records may be rendered with ``--trust`` (issue 40).

`codeact drift` renders the recorded template with Copier, and the template's Jinja extensions and tasks run on the
host, with the CI job's template token in their environment. A pull request can change ``_src_path`` and
``_commit`` in two lines, so neither is taken from the checked tree alone:

- ``_src_path`` must be the source the BASE records (the pull request's base in CI, ``--base``; locally HEAD's, or
  where HEAD left the remote's default branch: :func:`local_base`) — or, with ``--policy-from SRC``, the
  organisation's SRC, which is what renders then;
- ``_commit`` must be a tag of that source, or a commit its default branch holds (Renovate and the update workflow
  move it to a newer tag: that is no drift).

Both are read with git only (a blob-less clone; nothing of the template runs), and only for a source the base
records: a source that fails either is reported as ``source`` drift and never rendered, nor read for its policy. A
local source inside the repository is none (its files are the pull request's; git run there runs its config).
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import re
import subprocess
from pathlib import Path

from ..layout import ANSWERS_FILE, LEGACY_ANSWERS_FILE, answers_file

UNREACHABLE = "cannot reach the template"  # how an error that is about the network (not the answers) begins


def _git(project: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, check=False)


def base_source(project: Path, base: str) -> str | None:
    """The ``_src_path`` the revision ``base`` records (either place of the answers file), or None."""
    from .orgpolicy import load_answers

    for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE):
        shown = _git(project, "show", f"{base}:{name}")
        if shown.returncode == 0:
            src = load_answers(shown.stdout.decode("utf-8", "replace")).get("_src_path")
            return src if isinstance(src, str) else None
    return None


def local_base(project: Path) -> str:
    """The base a local check trusts: where HEAD left the remote's default branch (``merge-base HEAD origin/HEAD``)
    when that commit records an answers file, else HEAD. After ``gh pr checkout`` HEAD is the pull request's own
    commit: a ``_src_path`` it moved would pass as reviewed against HEAD; against the fork point it is drift."""
    remote = _git(project, "rev-parse", "--verify", "-q", "refs/remotes/origin/HEAD^{commit}")
    if remote.returncode != 0:
        return "HEAD"
    fork = _git(project, "merge-base", "HEAD", remote.stdout.decode().strip())
    point = fork.stdout.decode().strip()
    return point if fork.returncode == 0 and point and _records_answers(project, point) else "HEAD"


def _shown(base: str) -> str:
    """A revision as a message names it (a commit :func:`local_base` found: its short id and where it comes from)."""
    if len(base) == 40 and all(c in "0123456789abcdef" for c in base):
        return f"{base[:12]} (where HEAD left origin/HEAD)"
    return base


def _records_answers(project: Path, base: str) -> bool:
    """Whether the revision ``base`` holds an answers file (either place); False without ``base``."""
    return any(_git(project, "cat-file", "-e", f"{base}:{name}").returncode == 0
               for name in (ANSWERS_FILE, LEGACY_ANSWERS_FILE))


def _uncommitted_stamp(project: Path, base: str) -> bool:
    """Whether the stamp in the working tree is one nobody committed: ``base`` holds no answers file and no
    ``.codeact`` at all, and the index holds no ``.codeact`` submodule (whose answers file a clone would check out
    with the repository)."""
    if _records_answers(project, base) or _git(project, "cat-file", "-e", f"{base}:.codeact").returncode == 0:
        return False
    staged = _git(project, "ls-files", "--stage", "--", ".codeact").stdout
    return not any(line.startswith(b"160000 ") for line in staged.splitlines())


# What Copier records as _commit: a tag (as git names allow: `v1!0.2.0` too), `git describe --tags`' name or a
# commit id. None of git's other revision forms (`:/text` matches commit messages on any ref, `@{...}` a reflog,
# `^{/x}` a search, `~`, a leading `-` an option).
_VERSION_NAME = re.compile(r"[^\s:^~?*\[\\\x00-\x1f\x7f-][^\s:^~?*\[\\\x00-\x1f\x7f]*")


def commit_error(src: str, commit: str, project: Path) -> str:
    """Why ``commit`` is not a version of the template ``src`` that may render: "" when it is a tag of ``src`` or
    a commit its default branch holds. Read in a clone of our own (:func:`~.orgpolicy.template_repository`)."""
    from ..errors import ConfigError
    from .orgpolicy import UntrustedSourceError, template_git, template_repository

    if not _VERSION_NAME.fullmatch(commit) or any(bad in commit for bad in ("..", "@{", "//")) or commit == "@" \
            or commit.endswith((".lock", "/", ".")):
        return f"_commit {commit!r} is not a version name (a tag, `git describe`'s name, or a commit id)"
    try:
        with template_repository(src, project) as repo:
            if template_git(repo, "rev-parse", "--verify", "-q", f"refs/tags/{commit}^{{commit}}").returncode == 0:
                return ""
            resolved = template_git(repo, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}")
            if resolved.returncode != 0:
                return f"_commit {commit!r} is no version of {src}"
            sha = resolved.stdout.strip()
            if template_git(repo, "merge-base", "--is-ancestor", sha, "HEAD").returncode == 0:
                return ""
            branch = template_git(repo, "symbolic-ref", "-q", "--short", "HEAD").stdout.strip() or "HEAD"
            return (f"_commit {commit!r} ({sha[:12]}) is neither a tag of {src} nor a commit of its default branch "
                    f"{branch}")
    except UntrustedSourceError as exc:
        return str(exc)
    except (ConfigError, OSError, subprocess.SubprocessError) as exc:
        return f"{UNREACHABLE} {src} to check _commit {commit!r}: {exc}"


def source_errors(project: Path, base: str, policy_from: str | None, *, first_stamp: bool = False) -> list[str]:
    """Why the recorded template may not be rendered with ``--trust``; empty when it may. With ``policy_from``
    the organisation's source renders (a different ``_src_path`` is reported by the policy check). With
    ``first_stamp``, a ``base`` that records no answers file at all (a stamp not committed yet) takes the working
    tree's source, still checking ``_commit`` against it: `codeact uninstall` on the user's machine renders the
    template that user's own `copier copy` just ran, where no reviewed base exists to compare with."""
    from .orgpolicy import load_answers, same_source

    answers = load_answers((project / answers_file(project)).read_text(encoding="utf-8"))
    src, commit = answers.get("_src_path"), answers.get("_commit")
    if not isinstance(src, str) or not isinstance(commit, str):
        return ["the answers record no template source (_src_path) or version (_commit)"]
    errors = []
    if policy_from:
        src = policy_from
    else:
        trusted = base_source(project, base)
        if trusted is None and first_stamp and _uncommitted_stamp(project, base):
            trusted = src
        if trusted is None:
            return [f"{base} records no template source to check _src_path {src!r} against (a first stamp: "
                    "the check runs once the stamp is committed, or on the pull request after it is merged)"]
        if not same_source(src, trusted):
            return [f"_src_path is {src!r}, but {_shown(base)} records {trusted!r}: a changed template source is never "
                    "rendered (its code would run here); change it back, or make the move in its own reviewed "
                    "commit on the base branch"]
    inside = _inside_project(project, src)
    if inside:
        return [inside]
    why = commit_error(src, commit, project)
    if why:
        errors.append(why)
    return errors


def _inside_project(project: Path, src: str) -> str:
    """Why a local template source is none (:func:`~.orgpolicy.template_folder`: one that lies inside ``project``,
    whose files are the checked tree's own, a pull request's); "" for any other source."""
    from .orgpolicy import UntrustedSourceError, template_folder

    try:
        template_folder(src, project)
    except UntrustedSourceError as exc:
        return str(exc)
    return ""
