"""Where settings come from: the stamped ``settings.json``, the user's config folder and the environment.

Precedence, lowest first: the stamped answers, the user's ``config.json``, ``CODEACT_*`` variables.
Settings that widen access (more tools, secrets, hosts) are read only from the user's side, never from a program.
"""
from __future__ import annotations

# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..paths import user_config_dir
from .catalog import ALWAYS_TOOLS, BUILTINS, DEFAULT_TOOLS

BACKENDS = ("auto", "monty", "hyperlight")
SETTINGS_FILE = "settings.json"


@functools.lru_cache(maxsize=1)
def codeact_home() -> Path:
    """The stamped ``.codeact`` folder this runtime was vendored into (``.codeact/runtime/codeact/``); resolved
    once a process (every run asks for it)."""
    return Path(__file__).resolve().parents[3]


def launcher_invocation(arguments: str) -> str:
    """``ARGUMENTS`` given to this install's launcher, as a person or the model pastes it: the launcher by its full
    path, quoted for the shell (``codeact`` is not on PATH), in backquotes."""
    import shlex

    return f"`{shlex.quote(str(codeact_home() / 'bin' / 'codeact'))} {arguments}`"


class Settings(NamedTuple):
    """The stamped answers, as ``.codeact/settings.json`` records them."""

    backend: str = "auto"
    tools: tuple[str, ...] = DEFAULT_TOOLS
    enforcement: str = "off"
    scope: str = "repo"
    extra: Mapping[str, Any] = MappingProxyType({})

    @property
    def mcp_exclude(self) -> tuple[str, ...]:
        """The MCP servers kept out of the sandbox (``mcp_exclude``; a single name is accepted too)."""
        value = self.extra.get("mcp_exclude") or ()
        return (value,) if isinstance(value, str) else tuple(value)

    @classmethod
    def load(cls, home: Path | None = None) -> Settings:
        path = (home or codeact_home()) / SETTINGS_FILE
        if not path.is_file():
            return cls()
        data = _read_json(path)
        known = {k: data.pop(k) for k in ("backend", "tools", "enforcement", "scope") if k in data}
        if "tools" in known:
            known["tools"] = tuple(known["tools"])
        return cls(**known, extra=data)


def load_user_config(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The user's ``config.json`` (``{"enabled": [...], "disabled": [...], "allow_hosts": [...]}``), or ``{}``."""
    path = user_config_dir(environ) / "config.json"
    if not path.is_file():
        return {}
    data = _read_json(path)
    for key in ("enabled", "disabled", "allow_hosts"):
        if key in data and not (isinstance(data[key], list) and all(isinstance(x, str) for x in data[key])):
            raise ConfigError(f"{path}: {key!r} must be a list of strings")
    return data


def _split(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def enabled_builtins(settings: Settings, user_config: Mapping[str, Any],
                     environ: Mapping[str, str] | None = None) -> list[str]:
    """The built-in tools offered now: stamped, plus enabled, minus disabled (environment wins over config)."""
    env = os.environ if environ is None else environ
    chosen = [*settings.tools, *(t for t in ALWAYS_TOOLS if t not in settings.tools)]
    env_on, env_off = _split(env.get("CODEACT_TOOLS")), _split(env.get("CODEACT_DISABLE"))
    for name in list(user_config.get("enabled", [])) + env_on:
        if name not in chosen:
            chosen.append(name)
    off = (set(user_config.get("disabled", [])) - set(env_on)) | set(env_off)
    unknown = [n for n in chosen if n not in BUILTINS]
    if unknown:
        raise ConfigError(f"unknown built-in tool(s) {', '.join(unknown)}; valid: {', '.join(BUILTINS)}")
    return [n for n in BUILTINS if n in chosen and n not in off]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data
