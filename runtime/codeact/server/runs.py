"""One run request on the server: the command line as the client gave it, with the request's own folder,
environment and standard input, its prints routed back to the client."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import streams

if TYPE_CHECKING:
    from ..frames import RunRequest

GRACE_S = 1.5  # past the run's own limit (which counts MCP start-up): the client gives up 0.5 s later (timeout + 2 s)


def wall_limit(message: RunRequest) -> float:
    """How long the server waits for a run before abandoning it: its time limit (``--timeout``, read as argparse
    reads it, else ``CODEACT_TIMEOUT``, else the default) plus :data:`GRACE_S`."""
    from ..cmdline import parse
    from ..core.limits import Limits

    parsed = parse(message["argv"])
    given = parsed.value("--timeout") if parsed is not None else None
    try:
        timeout = float(given) if given is not None else Limits.from_env(message["env"]).timeout
    except Exception:  # noqa: BLE001 - the run itself reports a bad limit
        timeout = Limits().timeout
    if not 0 < timeout < 1e9:  # nan, inf, negative: the run refuses it
        timeout = Limits().timeout
    return float(timeout) + GRACE_S


def execute(message: RunRequest, out: Callable[[str], None], err: Callable[[str], None]) -> int:
    """Run ``message["argv"]`` (a ``codeact run``, ``tools``, ``describe`` or ``search`` command line) as the client
    would have run it; its exit code."""
    from ..client import SERVED

    argv = message["argv"]
    if not argv or argv[0] not in SERVED:
        err(f"codeact: the server runs only {', '.join(SERVED)}\n")
        return 2
    with streams.routed(out, err):
        from ..cli import main

        try:
            return int(main(argv, environ=message["env"], cwd=message["cwd"] or "/", stdin=message["stdin"]))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)
        except Exception:  # noqa: BLE001 - a bug must reach the client, and must not take the server down
            err("codeact: internal error in the server:\n" + traceback.format_exc())
            return 1


__all__ = ["execute"]
