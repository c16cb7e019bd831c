"""``codeact drift``: exit 1 if the repository no longer matches the template, its answers and the MCP configuration."""
# Imports inside functions are lazy: each module is imported only when a run or command uses it (start-up cost).
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..errors import EXIT_OK, EXIT_PROGRAM_ERROR


def add_parser(sub: Any) -> None:
    """Add ``drift`` to the subcommands ``sub``."""
    drift_p = sub.add_parser("drift", help="exit 1 if this repo no longer matches the template, its answers and the "
                                           "MCP configuration (for CI and pre-commit)",
                             description="Compare the repository with what the recorded template version, the "
                                         "recorded answers and the current MCP configuration produce. Never "
                                         "modifies the working tree. Needs `copier` on PATH.")
    mode = drift_p.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="compare MCP configs with the lock without starting "
                                                             "any server (the default)")
    mode.add_argument("--live", action="store_true", help="re-discover the MCP servers (starts them) and compare")
    drift_p.add_argument("--check-newer", action="store_true", help="also fail when a newer template version exists")
    drift_p.add_argument("--policy-from", metavar="SRC", help="the organisation's check: the answers against the "
                                                              "codeact-policy.yml of the template SRC (its default "
                                                              "branch), every owned file against what SRC renders "
                                                              "at the recorded version; fails when the answers' "
                                                              "_src_path is not SRC. Run it with the organisation's "
                                                              "runtime and --repo, not the repository's launcher")
    drift_p.add_argument("--base", metavar="REV",
                         help="the revision whose answers name the trusted template source (default: where HEAD "
                              "left origin's default branch if that commit has them, else HEAD; CI passes the pull "
                              "request's base): a different _src_path, or a _commit that is "
                              "neither a tag nor on the source's default branch, fails the check and is never "
                              "rendered")
    drift_p.add_argument("--repo", "--workspace", dest="workspace", metavar="PATH",
                         help="the repository to check (default: the git top-level of the current folder)")
    drift_p.add_argument("--json", action="store_true", help="print the result as JSON")


def main(args: argparse.Namespace) -> int:
    from ..core.boundary import find_workspace
    from ..lifecycle.drift import check
    from ..lifecycle.orgpolicy import given_source

    project = find_workspace(args.workspace)
    policy_from = given_source(args.policy_from) if args.policy_from else None
    notes: list[str] = []
    drifts = check(project, live=args.live, check_newer=args.check_newer, policy_from=policy_from,
                   base=args.base, notes=notes)
    for note in notes:
        print(f"codeact drift: {note}", file=sys.stderr)
    if args.json:
        text = json.dumps({"ok": not drifts, "drift": [d.to_json() for d in drifts]}, indent=2)
    elif drifts:
        text = f"codeact drift: {len(drifts)} problem(s) in {project.name}:\n" + "\n".join(
            f"  {d.kind:<14} {d.path}\n  {'':<14} {d.detail}" for d in drifts)
    else:
        text = "codeact drift: in sync with the template, its answers and the MCP configuration"
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `drift --json | head`: the reader left; the exit code still says the result
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush is quiet too
    return EXIT_PROGRAM_ERROR if drifts else EXIT_OK
