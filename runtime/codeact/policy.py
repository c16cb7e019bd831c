"""The safety policy: every path a tool touches stays inside the workspace; writes refuse ``.git`` and secrets."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Mapping, NamedTuple

from .errors import PolicyError

# Token shapes worth refusing in files the agent writes (CODEACT_ALLOW_SECRETS=1 lifts the check).
SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
    "OpenAI-style API key": re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}\b"),
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
}


# What a program may read but never write: git's own data, what enforces CodeAct (its runtime, launcher and hooks)
# — a program that rewrote those could lift its own policy — and the MCP configuration, whose commands the host
# starts (a program that rewrote it could run any command, bash enabled or not). Folders end with "/"; the check
# appends "/" to every path, so a file's entry is its name plus "/".
PROTECTED_FOR_WRITE: dict[str, str] = {
    ".git/": "use git through bash instead",
    ".codeact/": "the CodeAct runtime and hooks are changed by `copier update`, not by programs",
    ".github/hooks/": "Copilot hooks enforce the user's policy; change them by hand",
    "plugins/codeact/": "the CodeAct plugin is changed by `copier update`, not by programs",
}
# Files whose commands the host starts (MCP and language servers), at any depth: the Copilot CLI reads every
# .mcp.json from its working folder up to the git root. Matched on the last components of the path.
COMMAND_FILES: tuple[tuple[str, ...], ...] = (
    (".mcp.json",), (".github", "mcp.json"), (".github", "lsp.json"), (".vscode", "mcp.json"))
COMMAND_FILES_WHY = "it names commands the host starts (MCP or language servers); change it by hand"
# The protected paths at the root, checked once more where they lead when they are symlinks.
_ROOT_PROTECTED = (*(k.rstrip("/") for k in PROTECTED_FOR_WRITE), *("/".join(t) for t in COMMAND_FILES))


def find_workspace(start: Path | str | None = None) -> Path:
    """The git top-level of ``start`` (default: the current folder), else ``start`` itself."""
    here = Path(start or os.getcwd()).resolve()
    probe = here
    while True:
        if (probe / ".git").exists():
            return probe
        if probe.parent == probe:
            break
        probe = probe.parent
    try:  # worktrees and unusual layouts: ask git, which is slower
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        if top.returncode == 0 and top.stdout.strip():
            return Path(top.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return here


def host_folders(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """Folders whose files the host runs or trusts: Copilot's home (its MCP servers, trusted folders, hooks), the
    user's codeact config (user tools run on the host) and codeact's cache (the runtime's venvs). A workspace that
    contains one of them (a workspace that is $HOME) must not let a program write there."""
    from .config import user_config_dir  # not at import time: config imports the tool catalog

    home = Path(environ.get("HOME") or Path.home()).expanduser()
    copilot = Path(environ["COPILOT_HOME"]).expanduser() if environ.get("COPILOT_HOME") else home / ".copilot"
    cache = environ.get("XDG_CACHE_HOME") or ""
    cache_root = Path(cache) if os.path.isabs(cache) else home / ".cache"
    return tuple(Path(os.path.realpath(p)) for p in (copilot, user_config_dir(environ), cache_root / "codeact"))


class Workspace(NamedTuple):
    """The folder the sandbox may reach. Paths are resolved (symlinks included) before any check."""

    root: Path
    allow_secrets: bool = False
    host_folders: tuple[Path, ...] = ()  # those inside ``root``: never written (see :func:`host_folders`)

    @classmethod
    def at(cls, root: Path | str, *, allow_secrets: bool = False,
           environ: Mapping[str, str] | None = None) -> "Workspace":
        path = Path(root).resolve()
        if not path.is_dir():
            raise PolicyError(f"workspace {root} is not a folder")
        inside = tuple(f for f in host_folders(os.environ if environ is None else environ) if f.is_relative_to(path))
        return cls(path, allow_secrets, inside)

    def resolve(self, path: str | os.PathLike[str], *, must_exist: bool = False) -> Path:
        """The real path of ``path`` (relative to the workspace root), refused if it leaves the workspace."""
        raw = os.fspath(path)
        if not raw:
            raise PolicyError("path is empty; give a path relative to the workspace root, e.g. 'src/app.py'")
        if "\x00" in raw:
            raise PolicyError("path contains a NUL byte")
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        real = Path(os.path.realpath(candidate))
        if real != self.root and not real.is_relative_to(self.root):
            raise PolicyError(f"path {raw!r} is outside the workspace; use paths inside it, relative to its root")
        if must_exist and not real.exists():
            raise FileNotFoundError(f"no such file or folder: {self.display(real)}")
        return real

    def resolve_for_write(self, path: str | os.PathLike[str]) -> Path:
        """Like :meth:`resolve`, and also refuses what a program must not write: ``.git``, what enforces the policy,
        files naming commands the host starts, and host folders inside the workspace — checked on the path as
        given AND on where it leads (a symlink named ``notes.json`` may point at ``.mcp.json``, and back)."""
        real = self.resolve(path)
        raw = Path(os.fspath(path))
        given = Path(os.path.normpath(raw if raw.is_absolute() else self.root / raw))
        for candidate in {given, real}:
            if candidate == self.root or not candidate.is_relative_to(self.root):
                continue
            self._refuse_protected(candidate.relative_to(self.root), real)
        for name in _ROOT_PROTECTED:  # reached through a symlink elsewhere in the workspace: the same file
            target = Path(os.path.realpath(self.root / name))
            if target != self.root / name and (real == target or real.is_relative_to(target)):
                self._refuse_protected(Path(name), real)
        for folder in self.host_folders:
            if real == folder or real.is_relative_to(folder):
                raise PolicyError(f"writing {self.display(real)} is refused: it is in {self.display(folder)}, whose "
                                  "files the host runs or trusts (Copilot's home, codeact's config or cache)")
        return real

    def _refuse_protected(self, rel: Path, real: Path) -> None:
        parts = tuple(part.lower() for part in rel.parts)  # .GIT, .GITHUB/HOOKS on case-folding disks too
        if ".git" in parts:  # any repository's data, nested ones (vendor/x/.git/hooks) too
            raise PolicyError(f"writing inside .git is refused ({self.display(real)}): {PROTECTED_FOR_WRITE['.git/']}")
        text = "/".join(parts) + "/"
        for protected, why in PROTECTED_FOR_WRITE.items():
            if text.startswith(protected):
                raise PolicyError(f"writing inside {protected} is refused ({self.display(real)}): {why}")
        for tail in COMMAND_FILES:
            if parts[-len(tail):] == tail:
                raise PolicyError(f"writing {'/'.join(tail)} is refused ({self.display(real)}): {COMMAND_FILES_WHY}")

    def display(self, path: Path | str) -> str:
        """``path`` relative to the workspace root, as the program and the user see it — never a host path."""
        p = Path(path)
        try:
            rel = p.relative_to(self.root)
        except ValueError:
            try:
                rel = Path(os.path.realpath(p)).relative_to(self.root)
            except ValueError:
                return "<outside workspace>"
        return rel.as_posix() or "."

    def scrub(self, message: str) -> str:
        """Replace host paths of the workspace in an error message with workspace-relative ones."""
        root = str(self.root)
        return message.replace(root + os.sep, "").replace(root, ".")

    def check_secrets(self, text: str, path: Path, *, before: str = "") -> None:
        """Refuse ``text`` (what ``path`` would hold after a write) if it holds a credential ``before`` (what it
        holds now) did not, unless the user allowed secrets; the rules live in :mod:`codeact.secrets`."""
        if self.allow_secrets:
            return
        from . import secrets  # only on writes: its patterns compile on first use

        secrets.check(text, where=self.display(path), before=before)
