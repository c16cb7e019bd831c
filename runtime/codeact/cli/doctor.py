"""``codeact doctor [--refresh] [--json]``: print the checks of :mod:`codeact.lifecycle.doctor`.

Exit 0 when the backend that would run works, 3 when it does not (2 for a bad backend setting). The template's
checks (copier and its extensions) are reported but do not change the exit code: running programs does not need
copier.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import EXIT_OK, EXIT_USAGE
from ..lifecycle.doctor import Report, collect

_MARK = {True: "ok  ", False: "FAIL", None: "skip"}


def render(report: Report) -> str:
    lines = [f"codeact {report.versions.get('codeact')} on Python {report.versions.get('python')} "
             f"({sys.executable})",
             f"backend: {report.backend} - {report.reason}", ""]
    group = None
    for check in report.checks:
        if check.group != group:
            group = check.group
            lines.append(group)
        lines.append(f"  {_MARK[check.ok]}  {check.name:<13} {check.detail}")
        if check.ok is False and check.fix:
            lines.append(f"        {'':<13} fix: {check.fix}")
    lines.append("")
    if report.exit_code == EXIT_OK:
        lines.append(f"ok: programs run on {report.backend}.")
    elif report.exit_code == EXIT_USAGE:
        lines.append("error: the backend setting is invalid (see above).")
    elif report.backend == "hyperlight":
        lines.append("error: the chosen backend (hyperlight) cannot run here; see the fixes above, or choose monty "
                     "(CODEACT_BACKEND=monty, or --backend monty).")
    else:
        lines.append(f"error: the chosen backend ({report.backend}) cannot run here; see the fixes above.")
    return "\n".join(lines)


def add_parser(sub: Any) -> None:
    """Add ``doctor`` to the subcommands ``sub``."""
    doctor_p = sub.add_parser("doctor", help="which backend runs and why; checks with fixes")
    doctor_p.add_argument("--refresh", action="store_true", help="re-probe the backends instead of using the cache")
    doctor_p.add_argument("--json", action="store_true", help="print the checks as JSON")


def main(args: argparse.Namespace) -> int:
    report = collect(refresh=bool(getattr(args, "refresh", False)))
    if getattr(args, "json", False):
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return report.exit_code


__all__ = ["add_parser", "main", "render"]
