"""``codeact.cmdline.parse`` by argparse instead of the runtime's own reader: the runtime without that piece.

benchmarks/bench_kept.py appends this file to ``codeact/cmdline.py`` in a copy of the stamped repository, where
it replaces :func:`parse` (the table and :class:`Parsed` stay the runtime's). No ``typing`` at run time, as there.
"""
from codeact.cmdline import HELP, OPTIONS, POSITIONALS, Parsed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


class _Refused(Exception):
    """argparse refused the command line (the full command line then says why)."""


_NARGS = {(0, 1): "?", (1, 1): None, (1, None): "+", (0, None): "*"}


def parse(argv: "Sequence[str]") -> "Parsed | None":
    """``argv`` (``[COMMAND, ...]``) read by argparse for a subcommand of the table; ``None`` for another
    subcommand or a command line argparse refuses."""
    if not argv or argv[0] not in OPTIONS:
        return None
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> "NoReturn":
            raise _Refused(message)

    parser = Parser(prog=f"codeact {argv[0]}", add_help=False, allow_abbrev=False)
    parser.add_argument(*HELP, action="store_true", dest="help")
    for option, takes_value in OPTIONS[argv[0]].items():
        parser.add_argument(option, dest=option, default=None, action="store" if takes_value else "store_true")
    fewest, most, choices = POSITIONALS[argv[0]]
    parser.add_argument("positionals", nargs=_NARGS[fewest, most], choices=choices)
    try:
        read = vars(parser.parse_args(argv[1:]))
    except _Refused:
        return None
    parsed = Parsed(argv[0])
    given = read.pop("positionals")
    parsed.positionals = [] if given is None else given if isinstance(given, list) else [given]
    parsed.help = read.pop("help")
    parsed.options = {name: value for name, value in read.items() if value is not None}
    return parsed
