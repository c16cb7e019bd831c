"""The user's folders, computed in one place: home, Copilot's home, the XDG base folders, codeact's config and cache.

A leaf module (standard library only) so every other module can use it without an import cycle. Nothing here is
resolved unless the name says so: the Copilot CLI and the XDG specification use the values as given.
"""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

# XDG base folders and their defaults below home (https://specifications.freedesktop.org/basedir-spec/).
XDG_DEFAULTS: dict[str, tuple[str, str]] = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "data": ("XDG_DATA_HOME", ".local/share"),
    "state": ("XDG_STATE_HOME", ".local/state"),
    "cache": ("XDG_CACHE_HOME", ".cache"),
}


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def home(environ: Mapping[str, str] | None = None) -> Path:
    """``$HOME``, else the home folder Python finds (the passwd entry's)."""
    return Path(_env(environ).get("HOME") or Path.home()).expanduser()


def passwd_home() -> Path | None:
    """The passwd entry's home folder of this user (None where there is none, e.g. on Windows)."""
    try:
        import pwd
    except ImportError:
        return None
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (KeyError, OSError):
        return None


def homes(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """Every folder that is this user's home (``$HOME`` and the passwd entry's, when they differ), resolved."""
    found = [home(environ), passwd_home()]
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in found if p is not None and str(p) not in ("", ".")))


def copilot_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$COPILOT_HOME``, else ``~/.copilot`` (not resolved: the CLI uses it as given)."""
    env = _env(environ)
    value = env.get("COPILOT_HOME")
    return Path(value).expanduser() if value else home(env) / ".copilot"


def xdg_dir(kind: str, environ: Mapping[str, str] | None = None) -> Path:
    """The XDG base folder ``kind`` (config, data, state or cache); a relative ``$XDG_*_HOME`` is ignored, as the
    specification says."""
    variable, default = XDG_DEFAULTS[kind]
    env = _env(environ)
    value = env.get(variable) or ""
    return Path(value) if os.path.isabs(value) else home(env) / default


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """codeact's config folder (the user's config.json and tools): ``$CODEACT_CONFIG_DIR``, else
    ``$XDG_CONFIG_HOME/codeact``, else ``~/.config/codeact`` (the XDG rule of :func:`xdg_dir`: a relative
    ``$XDG_CONFIG_HOME`` is ignored)."""
    env = _env(environ)
    if env.get("CODEACT_CONFIG_DIR"):
        return Path(env["CODEACT_CONFIG_DIR"]).expanduser()
    return xdg_dir("config", env) / "codeact"


def codeact_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """codeact's cache folder (the runtime's shared venvs, probe results): ``$XDG_CACHE_HOME/codeact``."""
    return xdg_dir("cache", environ) / "codeact"


def venv_folders(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The venvs whose files a Python start runs (a ``.pth`` file or ``sitecustomize`` in site-packages): the venv
    this Python runs in (the runtime's, which the next server start uses), ``$CODEACT_VENV`` (where the launchers
    keep one venv per requirements hash, shared between repositories) and the venv ``$CODEACT_PYTHON`` lies in
    (the launchers create venvs with it). Not resolved."""
    env = _env(environ)
    found = [Path(sys.prefix)] if sys.prefix != getattr(sys, "base_prefix", sys.prefix) else []
    if env.get("CODEACT_VENV"):
        found.append(Path(env["CODEACT_VENV"]).expanduser())
    python = env.get("CODEACT_PYTHON") or ""
    if os.path.isabs(python):
        venv = Path(python).parent.parent  # <venv>/bin/python, <venv>/Scripts/python.exe
        if (venv / "pyvenv.cfg").is_file():
            found.append(venv)
    return tuple(found)


_O_PATH = getattr(os, "O_PATH", 0)


def real_path(path: str) -> tuple[str, bool]:
    """``os.path.realpath(path)``, and whether the kernel saw it exist: for a path that exists, asked of the kernel
    (Linux: opened ``O_PATH``, its ``/proc/self/fd`` link read: three system calls, where ``os.path.realpath`` makes
    an ``lstat`` a component in Python), else ``os.path.realpath`` itself (``False``: a file to create, a dangling
    link, a loop, or no ``O_PATH`` here)."""
    if _O_PATH:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            fd = -1
        if fd >= 0:
            try:
                found = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                found = ""
            finally:
                os.close(fd)
            if found.startswith("/") and not found.endswith(" (deleted)"):
                return found, True
    return os.path.realpath(path), False


__all__ = ["XDG_DEFAULTS", "codeact_cache_dir", "copilot_home", "home", "homes", "passwd_home", "real_path",
           "user_config_dir", "venv_folders", "xdg_dir"]
