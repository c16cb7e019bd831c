"""The error hierarchy of the runtime, and the exit code each maps to.

Two audiences: user/config errors (``CodeactError`` subclasses, shown by the CLI with the fix) and
program errors (``ProgramError``, shown to the model with a fixed prefix and a hint).
"""
from __future__ import annotations

from typing import NamedTuple

EXIT_OK = 0
EXIT_PROGRAM_ERROR = 1
EXIT_USAGE = 2
EXIT_BACKEND_UNAVAILABLE = 3


class CodeactError(Exception):
    """Base of every error the runtime raises on purpose; ``str()`` tells the user what to do."""

    exit_code = EXIT_USAGE


class UsageError(CodeactError, ValueError):
    """A bad command line, flag value, setting or limit."""


class ConfigError(CodeactError, ValueError):
    """A configuration file or environment variable that cannot be used."""


class BackendUnavailable(CodeactError, RuntimeError):
    """The chosen sandbox backend cannot run on this machine."""

    exit_code = EXIT_BACKEND_UNAVAILABLE


class PolicyError(CodeactError, PermissionError):
    """A tool call the safety policy refuses (a path outside the workspace, a secret, a blocked host)."""


class ToolError(CodeactError, RuntimeError):
    """A tool could not do what it was asked; the message is shown to the program."""


class ToolTimeout(ToolError):
    """A tool call stopped at the run's deadline; the program sees it as a ``TimeoutError`` naming the tool.
    Not an ``OSError`` itself, so that no ``except OSError`` in a tool swallows it."""


class ErrorInfo(NamedTuple):
    """A program failure as the model sees it."""

    type: str
    message: str
    line: int | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "line": self.line, "hint": self.hint}


class ProgramError(CodeactError):
    """The sandboxed program failed: a syntax, type, runtime or limit error."""

    exit_code = EXIT_PROGRAM_ERROR

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(f"{info.type}: {info.message}")
        self.info = info


class PrivateFolderError(CodeactError, OSError):
    """A per-user folder that must be private (0700, this user's, not a link) is not, or cannot be made."""
