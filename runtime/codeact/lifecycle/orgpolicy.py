"""Organisation policy: ``codeact-policy.yml`` at the root of a template fork fixes or limits the answers of its fleet.

One entry per question::

    enforcement: exclusive            # the required value
    backend: [monty, hyperlight]      # the allowed values
    tools:                            # a multiselect
      allowed: [view, glob, grep, edit, sql]   # the answer must be a subset
      required: [view]                # all of these must be chosen
      forbidden: [bash]               # none of these may be chosen
    update_workflow: {value: true}    # the long form of a required value

Read by the template's Jinja extension (the questions' validators and defaults, so ``copier copy``/``update`` refuse
an answer that breaks it) and by ``codeact drift`` (the answers a repository records, against the policy of the
template version it records, or of the organisation's template with ``--policy-from``). PyYAML is imported lazily.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

POLICY_FILE = "codeact-policy.yml"
_RULE_KEYS = {"value", "allowed", "required", "forbidden"}
_SHORT_HOSTS = {"gh:": "https://github.com/", "gl:": "https://gitlab.com/"}


class PolicyFileError(ConfigError):
    """``codeact-policy.yml`` cannot be read or does not follow the format."""


@dataclass(frozen=True)
class Rule:
    """What the policy says about one question."""

    question: str
    value: Any = None
    has_value: bool = False
    allowed: tuple[Any, ...] | None = None
    required: tuple[Any, ...] = ()
    forbidden: tuple[Any, ...] = ()

    def violation(self, answer: Any) -> str:
        """Why ``answer`` breaks this rule ("" when it does not)."""
        if self.has_value:
            if _same(answer, self.value):
                return ""
            return f"the organisation's policy ({POLICY_FILE}) requires {_show(self.value)}, not {_show(answer)}"
        if isinstance(answer, (list, tuple)):
            chosen = list(answer)
            problems = []
            if self.allowed is not None:
                extra = [a for a in chosen if a not in self.allowed]
                if extra:
                    problems.append(f"{_show(extra)} not allowed (allowed: {_show(list(self.allowed))})")
            missing = [r for r in self.required if r not in chosen]
            if missing:
                problems.append(f"{_show(missing)} required")
            banned = [f for f in self.forbidden if f in chosen]
            if banned:
                problems.append(f"{_show(banned)} forbidden")
            return f"the organisation's policy ({POLICY_FILE}): {'; '.join(problems)}" if problems else ""
        if self.allowed is not None and answer not in self.allowed:
            return (f"the organisation's policy ({POLICY_FILE}) allows {_show(list(self.allowed))}, "
                    f"not {_show(answer)}")
        if answer in self.forbidden:
            return f"the organisation's policy ({POLICY_FILE}) forbids {_show(answer)}"
        return ""

    def default(self, fallback: Any) -> Any:
        """The template's default ``fallback`` brought within this rule (what ``--defaults`` should answer)."""
        if self.has_value:
            return self.value
        if isinstance(fallback, (list, tuple)):
            chosen = [c for c in fallback if (self.allowed is None or c in self.allowed) and c not in self.forbidden]
            return chosen + [r for r in self.required if r not in chosen]
        if self.allowed is not None and fallback not in self.allowed and self.allowed:
            return self.allowed[0]
        return fallback


@dataclass(frozen=True)
class Policy:
    """Every rule of one policy file, and where it was read from."""

    rules: Mapping[str, Rule]
    source: str

    def violation(self, question: str, answer: Any) -> str:
        rule = self.rules.get(question)
        return rule.violation(answer) if rule else ""

    def default(self, question: str, fallback: Any) -> Any:
        rule = self.rules.get(question)
        return rule.default(fallback) if rule else fallback

    def violations(self, answers: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(question, why)`` for each recorded answer that breaks the policy. A question the answers do not
        record was not asked (its ``when`` was false) or takes the policy's default on the next update."""
        found = []
        for name, rule in sorted(self.rules.items()):
            why = rule.violation(answers[name]) if name in answers else ""
            if why:
                found.append((name, why))
        return found


EMPTY = Policy({}, "")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return sorted(map(str, a)) == sorted(map(str, b))
    return bool(a == b)


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


def _items(value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise PolicyFileError(f"{where}: give a YAML list, e.g. [view, grep]")
    return tuple(value)


def _loader() -> Any:
    """PyYAML's SafeLoader, except that only true/false are booleans (``enforcement: off`` stays the string)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                 list("tTfF"))
    return Loader


def load_answers(text: str) -> dict[str, Any]:
    """A Copier answers file as a mapping (empty when it is not one)."""
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"the answers file is not valid YAML: {exc}") from None
    return data if isinstance(data, dict) else {}


def parse_policy(text: str, source: str) -> Policy:
    """The policy in ``text`` (YAML); raises :class:`PolicyFileError` naming the entry that is wrong."""
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise PolicyFileError(f"{source}: not valid YAML: {exc}") from None
    if data is None:
        return Policy({}, source)
    if not isinstance(data, dict):
        raise PolicyFileError(f"{source}: give one entry per question (a YAML mapping, e.g. `enforcement: exclusive`)")
    rules: dict[str, Rule] = {}
    for name, spec in data.items():
        where = f"{source}: {name}"
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z]\w*", name):
            raise PolicyFileError(f"{source}: {name!r} is not a question name")
        if isinstance(spec, list):
            rules[name] = Rule(name, allowed=_items(spec, where))
        elif isinstance(spec, dict):
            unknown = set(spec) - _RULE_KEYS
            if unknown or not spec:
                raise PolicyFileError(f"{where}: unknown key(s) {sorted(map(str, unknown))}; use value, allowed, "
                                      "required or forbidden" if unknown else f"{where}: empty rule")
            if "value" in spec and len(spec) > 1:
                raise PolicyFileError(f"{where}: `value` fixes the answer; it cannot be combined with other keys")
            rules[name] = Rule(
                name, value=spec.get("value"), has_value="value" in spec,
                allowed=_items(spec["allowed"], f"{where}.allowed") if "allowed" in spec else None,
                required=_items(spec.get("required", []), f"{where}.required"),
                forbidden=_items(spec.get("forbidden", []), f"{where}.forbidden"))
        else:
            rules[name] = Rule(name, value=spec, has_value=True)
        rule = rules[name]
        clash = set(map(str, rule.required)) & set(map(str, rule.forbidden))
        if clash:
            raise PolicyFileError(f"{where}: {sorted(clash)} both required and forbidden")
        if rule.allowed is not None and not set(map(str, rule.required)) <= set(map(str, rule.allowed)):
            raise PolicyFileError(f"{where}: every required item must also be allowed")
    return Policy(rules, source)


def load_policy(template_root: Path) -> Policy:
    """The policy at the root of a template checkout (:data:`EMPTY` when it ships none)."""
    path = template_root / POLICY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return EMPTY
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyFileError(f"{path}: cannot read it: {exc}") from None
    return parse_policy(text, str(path))


def git_url(src: str) -> str:
    """What ``git clone`` needs for a Copier source (``gh:owner/repo``, ``git+https://...``, a URL or a path)."""
    src = src.strip()
    for short, host in _SHORT_HOSTS.items():
        if src.startswith(short):
            return host + src[len(short):].removesuffix(".git") + ".git"
    return re.sub(r"^git\+", "", src, flags=re.I)


_URL_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.I)
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")  # git@host:owner/repo: git's ssh
_CLONE_SCHEMES = frozenset({"https", "http", "ssh", "git", "git+ssh", "ssh+git"})


def is_local_source(src: str) -> bool:
    """Whether a Copier source is a folder of this machine (a path or ``file://``), which CI cannot clone."""
    url = git_url(src)
    scheme = _URL_SCHEME.match(url)
    if scheme:
        return scheme.group(1).lower() == "file"
    return not _SCP_LIKE.match(url)


class UntrustedSourceError(ConfigError):
    """A template source git is never run on: a folder inside the checked repository (its files are the checked
    tree's own: a pull request's), or something that is neither a folder of this machine nor a URL git may clone."""


def _file_url_path(url: str) -> Path:
    """The absolute path of a ``file://`` URL, as urllib reads it (``file:///srv/t`` and ``file://localhost/srv/t``
    are ``/srv/t``; percent escapes decoded). Never a path relative to anything."""
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = urlsplit(url)
    if parts.netloc.lower() not in ("", "localhost") or parts.query or parts.fragment:
        raise UntrustedSourceError(f"the template source {url!r} is no folder of this machine (a file:// URL names "
                                   "a host, a query or a fragment)")
    path = Path(url2pathname(parts.path))
    if not path.is_absolute():
        raise UntrustedSourceError(f"the template source {url!r} is a file:// URL without an absolute path")
    return path


def _within(path: Path, top: Path) -> bool:
    """Whether ``path`` (resolved) is ``top`` or lies below it: by name, and by file identity for a filesystem
    that ignores case or a folder reachable under two names."""
    if path == top or path.is_relative_to(top):
        return True
    try:
        top_stat = top.stat()
    except OSError:
        return False
    for folder in (path, *path.parents):
        try:
            if os.path.samestat(folder.stat(), top_stat):
                return True
        except OSError:
            continue
    return False


def template_folder(src: str, project: Path) -> Path | None:
    """The real folder of this machine that the local source ``src`` names; None for a URL source (``gh:``,
    ``gl:``, ``https://``, ``ssh://``, ``git@host:``...), which is never a path, whatever folder its spelling names.

    A ``file://`` URL is read by urllib (an absolute path); ``~`` is the user's home; a relative path is relative
    to ``project`` (where Copier runs). Every step of the path is resolved (links followed) and none may lie inside
    ``project``: the checked repository's files are a pull request's, and git run in a folder among them runs what
    its config names (a promisor's ``uploadpack``). Raises :class:`UntrustedSourceError` for such a source."""
    url = git_url(src)
    if re.search(r"[\x00-\x1f\x7f]", url):
        raise UntrustedSourceError(f"the template source {src!r} holds a control character")
    scheme = _URL_SCHEME.match(url)
    if scheme and scheme.group(1).lower() != "file" or not scheme and _SCP_LIKE.match(url):
        return None
    try:
        path = _file_url_path(url) if scheme else Path(url).expanduser()
    except RuntimeError:  # ~user that does not exist
        raise UntrustedSourceError(f"the template source {src!r} names no folder of this machine") from None
    top = project.resolve()
    inside = UntrustedSourceError(f"the template source {src!r} lies inside the repository: its files are the "
                                  "checked tree's own, not a template's (git is never run there); record the "
                                  "template's own repository")
    here, steps = (Path(path.anchor), path.parts[1:]) if path.is_absolute() else (top, path.parts)
    if not steps and _within(here, top):
        raise inside
    for step in steps:  # by name and by real path: a link the checked tree holds is the checked tree's too
        named = here.parent if step == ".." else here / step
        here = named.resolve()
        if _within(named, top) or _within(here, top):
            raise inside
    return here


def given_source(src: str) -> str:
    """A source given on the command line (``--policy-from``): a relative folder is the working folder's, as a
    command's path argument is; a URL, ``~`` or an absolute path is kept as given."""
    url = git_url(src)
    if _URL_SCHEME.match(url) or _SCP_LIKE.match(url) or url.startswith("~") or os.path.isabs(url):
        return src
    return os.path.abspath(url)


def same_source(a: str, b: str) -> bool:
    """Whether two Copier sources name the same template repository."""
    return _canonical(a) == _canonical(b)


_CASE_BLIND_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org"})  # owner/repo paths that ignore case


def _canonical(src: str) -> str:
    """The repository ``src`` names: host and path, the path's case kept except on hosts that ignore it (another
    server, or a folder, may hold ``Tpl`` and ``tpl`` side by side: a pull request must not pass one for the other)."""
    url = git_url(src)
    scheme = _URL_SCHEME.match(url)
    if scheme and scheme.group(1).lower() == "file":
        try:
            return str(_file_url_path(url).resolve())
        except UntrustedSourceError:
            return url
    if scheme or _SCP_LIKE.match(url):
        url = re.sub(r"^[\w.-]+@([\w.-]+):", r"ssh://\1/", url)
        url = re.sub(r"^(ssh|git|https?)://([^/@]+@)?", "", url, flags=re.I)
        host, _, rest = url.partition("/")
        host, path = host.lower(), rest.rstrip("/").removesuffix(".git")
        return host + "/" + (path.lower() if host in _CASE_BLIND_HOSTS else path)
    try:
        return str(Path(url).expanduser().resolve())
    except (RuntimeError, ValueError):  # ~user that does not exist; a NUL
        return url


# Variables that point git at a repository (a git hook exports GIT_DIR and GIT_INDEX_FILE: the pre-commit hook runs
# drift with them set): git on a template clone must read the clone, never the checked repository.
_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
                         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_IMPLICIT_WORK_TREE",
                         "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE", "GIT_PREFIX", "GIT_REPLACE_REF_BASE",
                         "GIT_NO_REPLACE_OBJECTS", "GIT_INTERNAL_SUPER_PREFIX", "GIT_CONFIG")
OWN_GIT_ENV = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_VARIABLES}
GIT_ENV = {**OWN_GIT_ENV, "GIT_TERMINAL_PROMPT": "0"}  # never ask for a password: CI has no terminal
# Every git command on a template: only the transports a template source uses (no ext::, fd:: or other remote
# helpers), no hooks, no fsmonitor, and no repository git finds by itself in a bare folder.
_SAFE = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
         "-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always", "-c", "core.hooksPath=/dev/null",
         "-c", "core.fsmonitor=false", "-c", "safe.bareRepository=explicit")


def template_git(repo: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``git -C repo ARGS`` on a clone :func:`template_repository` made (never on a folder of anyone else's)."""
    return subprocess.run(["git", *_SAFE, "-C", repo, *args], capture_output=True, text=True, env=GIT_ENV,
                          timeout=timeout, cwd=repo)


@contextmanager
def template_repository(src: str, project: Path) -> Iterator[str]:
    """A git repository of the template ``src`` to read with git (never to render): always a clone of our own in a
    temporary folder (its HEAD is the source's default branch). A URL source is cloned blob-less; a local one
    (:func:`template_folder`: outside ``project``) is cloned from its real path with the system config, lazy
    fetches and the file transport's helpers off, so no git runs inside a folder with its own config after that."""
    folder = template_folder(src, project)
    url = git_url(src)
    if folder is None:
        scheme = _URL_SCHEME.match(url)
        if scheme and scheme.group(1).lower() not in _CLONE_SCHEMES:
            raise UntrustedSourceError(f"the template source {src!r} uses the transport {scheme.group(1)!r}; "
                                       f"give an https://, ssh:// or git@host: URL, or a folder")
    with tempfile.TemporaryDirectory(prefix="codeact-template-") as tmp:
        repo = os.path.join(tmp, "repo")
        if folder is None:
            command = ["git", *_SAFE, "clone", "-q", "--no-checkout", "--filter=blob:none", "--", url, repo]
            env = GIT_ENV
        else:
            command = ["git", *_SAFE, "-c", "protocol.file.allow=always", "clone", "-q", "--no-checkout",
                       "--no-hardlinks", "--", str(folder), repo]
            env = {**GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1", "GIT_NO_LAZY_FETCH": "1"}
        clone = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, cwd=tmp)
        if clone.returncode != 0:
            raise ConfigError(f"cannot read the template {src}: "
                              + (clone.stderr.strip().splitlines() or ["git clone failed"])[-1])
        yield repo


def fetch_policy(src: str, ref: str | None, project: Path) -> Policy:
    """The policy a template repository ships at ``ref`` (default: its default branch), read with git."""
    with template_repository(src, project) as repo:
        rev = ref or "HEAD"
        if rev.startswith("-"):
            raise ConfigError(f"the template {src} has no version {rev!r}")
        exists = template_git(repo, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
        if exists.returncode != 0:
            raise ConfigError(f"the template {src} has no version {rev!r}")
        shown = subprocess.run(["git", *_SAFE, "-C", repo, "show", f"{rev}:{POLICY_FILE}"], capture_output=True,
                               env=GIT_ENV, cwd=repo, timeout=300)
        if shown.returncode != 0:
            return Policy({}, f"{src}@{rev}")
        return parse_policy(shown.stdout.decode("utf-8", "replace"), f"{src}@{rev}:{POLICY_FILE}")
