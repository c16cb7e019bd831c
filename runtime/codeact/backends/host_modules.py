"""Standard modules the sandbox lacks, served by CPython on the host: ``statistics``, ``glob``, ``fnmatch``.

``import statistics`` in a program gets a namespace whose functions are host calls: the arguments cross as plain
data, CPython's own function computes the answer, and it crosses back. Only pure functions of plain data are here
(and ``glob``, which reads the workspace through the same policy as the file-system calls,
codeact.backends.sandbox_os): nothing that would hand the sandbox a host object or a callback.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.boundary import Workspace
from ..errors import PolicyError

_STATISTICS = ("mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low", "median_high",
               "median_grouped", "mode", "multimode", "quantiles", "pstdev", "pvariance", "stdev", "variance")
_FNMATCH = ("fnmatch", "fnmatchcase", "filter", "translate")


class HostModules:
    """The host modules of one run: ``members(module)`` for an import, ``call("module.func", args, kwargs)``."""

    def __init__(self, workspace: Workspace | None) -> None:
        self.workspace = workspace

    def members(self, module: str) -> tuple[str, ...] | None:
        if module == "statistics":
            return _STATISTICS
        if module == "fnmatch":
            return _FNMATCH
        if module == "glob" and self.workspace is not None:
            return ("glob", "iglob", "escape", "has_magic")
        return None

    def handles(self, name: str) -> bool:
        module, _, member = name.partition(".")
        members = self.members(module)
        return members is not None and member in members

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        module, _, member = name.partition(".")
        if module == "glob":
            return self._glob(member, args, kwargs)
        import importlib

        function: Callable[..., Any] = getattr(importlib.import_module(module), member)
        try:
            value = function(*args, **kwargs)
        except ValueError as exc:  # statistics.StatisticsError: a class the sandbox does not know
            raise ValueError(str(exc)) from None
        finally:
            if module == "fnmatch":
                _forget_patterns(args, kwargs)
        return list(value) if isinstance(value, tuple) and module == "statistics" else value

    def _glob(self, member: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import glob
        import os

        if member in ("escape", "has_magic"):
            return getattr(glob, member)(*args, **kwargs)
        assert self.workspace is not None
        pattern = str(args[0]) if args else str(kwargs.pop("pathname", ""))
        root = str(self.workspace.root)
        given = kwargs.pop("root_dir", None)
        base = root if given is None else os.path.join(root, str(given))
        try:
            self.workspace.resolve(base)
            if os.path.isabs(pattern):
                self.workspace.resolve(glob.escape(pattern.split("*")[0].rsplit("/", 1)[0] or "/"))
        except PolicyError as exc:
            raise PermissionError(f"glob.{member}({pattern!r}): {exc}") from None
        found = glob.glob(pattern, root_dir=base, **kwargs)
        kept = [p for p in found if self.workspace.contains(p if os.path.isabs(p) else os.path.join(base, p))]
        if len(kept) < len(found):
            from ..core import notices

            notices.note(f"glob.{member}", f"left out {len(found) - len(kept)} paths that lead outside the "
                         "workspace (symbolic links)")
        return kept




_KEPT_PATTERNS = 256  # compiled fnmatch patterns the host keeps between calls
_LONG_PATTERN = 1024


def _forget_patterns(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """fnmatch and re cache every pattern they compile (fnmatch up to 32,768, each ~18x its text): on the warm
    server those caches live across runs, so a program's patterns must not stay there. Short ones are kept while
    few; a long one is dropped at once."""
    import fnmatch
    import re

    long = any(isinstance(a, str) and len(a) > _LONG_PATTERN for a in (*args, *kwargs.values()))
    compiled = getattr(fnmatch, "_compile_pattern", None)
    if compiled is not None and hasattr(compiled, "cache_clear") and (
            long or compiled.cache_info().currsize > _KEPT_PATTERNS):
        compiled.cache_clear()
    if long:
        re.purge()

__all__ = ["HostModules"]
