"""The safety policy: every path a tool touches stays inside the workspace; writes refuse ``.git`` and secrets."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

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
    ".mcp.json/": "MCP servers are commands the host starts; change their configuration by hand",
    ".github/mcp.json/": "MCP servers are commands the host starts; change their configuration by hand",
}


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


class Workspace(NamedTuple):
    """The folder the sandbox may reach. Paths are resolved (symlinks included) before any check."""

    root: Path
    allow_secrets: bool = False

    @classmethod
    def at(cls, root: Path | str, *, allow_secrets: bool = False) -> "Workspace":
        path = Path(root).resolve()
        if not path.is_dir():
            raise PolicyError(f"workspace {root} is not a folder")
        return cls(path, allow_secrets)

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
        """Like :meth:`resolve`, and also refuses anything inside ``.git``."""
        real = self.resolve(path)
        parts = [part.lower() for part in real.relative_to(self.root).parts]
        if ".git" in parts:  # any repository's data, nested ones (vendor/x/.git/hooks) and .GIT on folded disks too
            raise PolicyError(f"writing inside .git is refused ({self.display(real)}): {PROTECTED_FOR_WRITE['.git/']}")
        rel = real.relative_to(self.root).as_posix().lower() + "/"  # .GITHUB/HOOKS on case-folding disks too
        for protected, why in PROTECTED_FOR_WRITE.items():
            if rel.startswith(protected):
                raise PolicyError(f"writing {protected.rstrip('/')} is refused ({self.display(real)}): {why}")
        return real

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

    def check_secrets(self, text: str, path: Path) -> None:
        """Refuse content that looks like a credential unless the user allowed secrets."""
        if self.allow_secrets:
            return
        for kind, pattern in SECRET_PATTERNS.items():
            if pattern.search(text):
                raise PolicyError(
                    f"refusing to write {self.display(path)}: the content looks like a {kind}. Keep secrets out of "
                    "files; if this is intended, the user can set CODEACT_ALLOW_SECRETS=1"
                )
