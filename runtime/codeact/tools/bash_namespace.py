"""A PID namespace per bash call (Linux): nothing a command starts can outlive its call, whatever it does.

The supervisor (:mod:`codeact.tools.bash_reaper`) runs as the user, so a command can SIGKILL it and start a process
without the call's mark (``kill -9 $PPID; env -i setsid …``): that process escaped every sweep. Run under
``unshare --pid --fork --mount-proc``, the supervisor is the namespace's init: the command can neither kill nor stop
it (the kernel drops those signals from inside), nor signal any process outside, and when the supervisor ends the
kernel kills every process left in the namespace. Root creates the namespace directly; any other user through a
user namespace that maps only itself (``--user --map-current-user``), where the system allows one. Where neither
works (no util-linux ``unshare``, user namespaces disabled), :func:`prefix` is empty and the supervisor's own sweep
and :mod:`codeact.tools.orphans` remain (docs/security.md says what then escapes).
"""
from __future__ import annotations

# Imports inside functions are lazy: each is needed only on the path that imports it.
import os
import sys
from collections.abc import Mapping

# "0" in this process's own environment (the CLI's, or the one the warm server started with) and the run's: bash runs
# without the namespace. Never the run's alone: the warm server runs a request with its client's environment, and a
# nested run that a program's bash call starts (`CODEACT_BASH_NAMESPACE=0 .codeact/bin/codeact run ...`, from inside
# its namespace) would have the server's bash calls run outside one
OPT_OUT = "CODEACT_BASH_NAMESPACE"
_SEARCHED = ("/usr/bin/unshare", "/bin/unshare", "/usr/sbin/unshare", "/sbin/unshare")  # never the caller's PATH
_FLAGS = ("--pid", "--fork", "--kill-child=SIGTERM", "--mount-proc")
_probed: tuple[str, ...] | None = None


def prefix(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The command line that starts the supervisor in a fresh PID namespace, or ``()`` where none can be made."""
    global _probed
    if (environ.get(OPT_OUT) == "0" and os.environ.get(OPT_OUT) == "0") or not sys.platform.startswith("linux"):
        return ()
    if _probed is None:
        _probed = _probe()
    return _probed


def _probe() -> tuple[str, ...]:
    """The first form of ``unshare`` that starts a process in a new PID namespace here (checked once a process)."""
    import subprocess

    binary = next((path for path in _SEARCHED if os.access(path, os.X_OK)), None)
    if binary is None:
        return ()
    forms: list[tuple[str, ...]] = [(binary, *_FLAGS)] if os.geteuid() == 0 else []
    forms.append((binary, "--user", "--map-current-user", *_FLAGS))
    for form in forms:
        try:
            done = subprocess.run([*form, "sh", "-c", 'test "$$" = 1'], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return form
    return ()
