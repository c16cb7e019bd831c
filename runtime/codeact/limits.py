"""Resource limits of one run: typed, with defaults, validated up front."""
from __future__ import annotations

import os
from typing import Any, Mapping, NamedTuple

from .errors import UsageError

MiB = 1024 * 1024


# Records are NamedTuples rather than dataclasses on the start-up path: a dataclass costs ~1 ms to create.
class _LimitValues(NamedTuple):
    timeout: float = 30.0  # wall time of the whole run, seconds
    memory: int = 256 * MiB  # sandbox heap, bytes
    recursion: int = 1000  # maximum recursion depth
    tool_calls: int = 10_000  # tool calls per run
    output: int = 16 * 1024  # what `codeact run` prints (stdout + stderr), bytes; the rest is stored (outputs.py)
    tool_result: int = 1 * MiB  # one tool result, bytes; longer text is cut visibly


class Limits(_LimitValues):
    """Every limit a run enforces. Override with flags, ``CODEACT_<NAME>`` variables or ``Limits(**kw)``."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> "Limits":
        self = super().__new__(cls, *args, **kwargs)
        for name, value in zip(self._fields, self):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise UsageError(f"limit {name!r} must be a positive number, got {value!r}")
        return self

    @classmethod
    def names(cls) -> list[str]:
        return list(cls._fields)

    def merged(self, overrides: Mapping[str, Any]) -> "Limits":
        """A copy with ``overrides`` applied; unknown names are refused with the valid list."""
        unknown = sorted(set(overrides) - set(self.names()))
        if unknown:
            raise UsageError(f"unknown limit(s) {', '.join(unknown)}; valid limits: {', '.join(self.names())}")
        converted: dict[str, Any] = {}
        for name, default in self._field_defaults.items():
            if name in overrides and overrides[name] is not None:
                raw = overrides[name]
                try:
                    converted[name] = float(raw) if isinstance(default, float) else int(raw)
                except (TypeError, ValueError):
                    raise UsageError(f"limit {name!r} must be a number, got {raw!r}") from None
        return Limits(**{**self._asdict(), **converted})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Limits":
        """Defaults overridden by ``CODEACT_TIMEOUT``, ``CODEACT_MEMORY``, ... from the environment."""
        env = os.environ if environ is None else environ
        overrides = {n: env[f"CODEACT_{n.upper()}"] for n in cls.names() if env.get(f"CODEACT_{n.upper()}")}
        return cls().merged(overrides)


def truncate(text: str, cap: int) -> str:
    """Cut ``text`` to ``cap`` UTF-8 bytes, saying how much was cut — never silently."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= cap:
        return text
    kept = data[:cap].decode("utf-8", "ignore")
    return f"{kept}\n... [truncated {len(data) - cap} more bytes; narrow your query]"
