"""Copier's before-update migration: refuse owned paths the update could not write (nothing is written yet), then
mark the update as running (``codeact.lifecycle.interrupted``), before Copier
writes anything into the project. The after-update migration clears the mark as its last step.

Usage (from the folder Copier updates): python update_started.py
(the scope is the recorded one: answers are not loaded yet when before-update migrations run)
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from codeact.layout import scope_of  # noqa: E402 - after the path above
from codeact.lifecycle.interrupted import begin, unwritable  # noqa: E402


def main(argv: list[str]) -> int:
    if argv:
        print("usage: update_started.py", file=sys.stderr)
        return 2
    here = Path.cwd()
    scope = scope_of(here)
    blocked = unwritable(here, scope)
    if blocked:
        # Nothing is written yet: stop here rather than drop what the update must merge into them.
        print("codeact: the update cannot write these template-owned paths (read-only), and would silently drop "
              "its changes to them:\n" + "\n".join(f"    {p}" for p in blocked)
              + "\nMake them writable (`chmod u+w -- " + " ".join(shlex.quote(p) for p in blocked)
              + "`), then update again.", file=sys.stderr)
        return 1
    begin(here, scope)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
