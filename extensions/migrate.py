"""Versioned migrations of the codeact template, run by Copier's `_migrations` before an update.

Usage: python migrate.py VERSION ANSWERS_FILE
Each migration rewrites what an older template version left behind so the new version can render it.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path


def v0_1_0(answers: Path) -> None:
    """Pre-release layouts called the nudge mode `warn`; v0.1.0 names it `nudge`."""
    text = answers.read_text(encoding="utf-8")
    updated = re.sub(r"^enforcement: ['\"]?warn['\"]?$", "enforcement: nudge", text, flags=re.M)
    if updated != text:
        answers.write_text(updated, encoding="utf-8")
        print("codeact migration v0.1.0: enforcement 'warn' is now called 'nudge'", file=sys.stderr)


MIGRATIONS = {"v0.1.0": v0_1_0}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in MIGRATIONS:
        print(f"usage: migrate.py {{{'|'.join(MIGRATIONS)}}} ANSWERS_FILE", file=sys.stderr)
        return 2
    MIGRATIONS[argv[0]](Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
