"""codeact: run one sandboxed Python program that calls tools as functions, and print only the answer.

Public surface: :func:`run`, :class:`RunResult`, :class:`Limits`, :class:`CodeactError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .errors import CodeactError
    from .core.limits import Limits
    from .core.runner import RunResult, run

_LAZY = {"run": "core.runner", "RunResult": "core.runner", "Limits": "core.limits", "CodeactError": "errors"}


def __getattr__(name: str) -> Any:  # imports stay lazy so `codeact` starts fast
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(name)


__all__ = ["run", "RunResult", "Limits", "CodeactError", "__version__"]
