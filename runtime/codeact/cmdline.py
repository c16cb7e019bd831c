"""The options of the subcommands a warm server serves, as one table, and the one reader of a command line by it.

A leaf (standard library only, no ``typing`` at run time): the launcher's thin client (``codeact.client``, under
``python -S``) reads the workspace, the timeout and whether the program comes from stdin with :func:`parse`; the
server reads a run's timeout with it (``codeact.server.runs``); and ``codeact.cli.run`` builds its argparse options
from :data:`OPTIONS`, so the three can never read one command line two ways. :func:`parse` reads what argparse
reads (``--opt VALUE``, ``--opt=VALUE``, ``--`` ending the options, ``-`` as a value or the stdin positional, the
last of a repeated option winning, no abbreviations); a command line argparse would refuse is ``None``: argparse
then says why. :data:`MAX_PROGRAM` bounds the program a run is given, wherever it comes from.
"""
TYPE_CHECKING = False  # not `typing`: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# subcommand -> {option: whether it takes a value}; `-h`/`--help` belong to every subcommand
OPTIONS: "dict[str, dict[str, bool]]" = {
    "run": {"--code": True, "--file": True, "--workspace": True, "--backend": True, "--timeout": True,
            "--json": False, "--session": True},
    "tools": {"--json": False, "--workspace": True},
    "describe": {"--workspace": True},
    "search": {"--limit": True, "--json": False, "--workspace": True},
}
HELP = ("-h", "--help")
# The most a program's source may hold, in UTF-8 bytes. The host parses a program (its checks, ``--session``) with the
# interpreter held, where the run's deadline cannot stop it, for a time that grows with the size: past this a run is
# refused before anything parses it. A model writes far less in one program; data this large belongs in a file.
MAX_PROGRAM = 256 * 1024
# subcommand -> (fewest, most) positionals (None: no most), and the only values they may take (None: any)
POSITIONALS: "dict[str, tuple[int, int | None, tuple[str, ...] | None]]" = {
    "run": (0, 1, ("-",)), "tools": (0, 1, None), "describe": (1, 1, None), "search": (1, None, None)}


class Parsed:
    """A command line read by :data:`OPTIONS`: ``command``, the options given (``{"--timeout": "5"}``; a flag's
    value is ``True``), the positionals in order, and whether help was asked for."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.options: dict[str, str | bool] = {}
        self.positionals: list[str] = []
        self.help = False

    def value(self, option: str) -> "str | None":
        """The value given to ``option`` (the last one), else ``None``."""
        got = self.options.get(option)
        return got if isinstance(got, str) else None

    @property
    def reads_stdin(self) -> bool:
        """Whether ``codeact run``'s program comes from standard input (the ``-`` positional)."""
        return self.command == "run" and self.positionals == ["-"]


def _is_value(arg: str, table: "dict[str, bool]") -> bool:
    """Whether argparse takes ``arg`` as a value (an option's, or a positional) rather than an option string, in
    argparse's own order: not starting with ``-``, or ``-`` alone; not a known option (``--opt`` or ``--opt=...``);
    a negative number (``-5``, ``-.5``: no option here looks like one); or holding a space."""
    if not arg.startswith("-") or arg == "-":
        return True
    if arg in table or arg in HELP or arg.partition("=")[0] in table:
        return False
    whole, dot, fraction = arg[1:].partition(".")
    if whole.isdecimal() and not dot or dot and fraction.isdecimal() and (whole == "" or whole.isdecimal()):
        return True
    return " " in arg


def parse(argv: "Sequence[str]") -> "Parsed | None":
    """``argv`` (``[COMMAND, ...]``) read as argparse reads it for a subcommand of :data:`OPTIONS`; ``None`` for
    another subcommand or a command line argparse refuses (an unknown option, a missing value)."""
    if not argv or argv[0] not in OPTIONS:
        return None
    table = OPTIONS[argv[0]]
    parsed = Parsed(argv[0])
    args = list(argv[1:])
    i, only_positionals = 0, False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_positionals or (arg != "--" and _is_value(arg, table)):
            parsed.positionals.append(arg)
            continue
        if arg == "--":
            only_positionals = True
            continue
        if arg in HELP:
            parsed.help = True
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        takes = table.get(name)
        if takes is None:
            return None  # unknown (or abbreviated) option
        if not takes:
            if eq:
                return None  # argparse: "ignored explicit argument"
            parsed.options[name] = True
        elif eq:
            parsed.options[name] = inline
        elif i < len(args) and args[i] != "--" and _is_value(args[i], table):
            parsed.options[name] = args[i]
            i += 1
        else:
            return None  # "expected one argument"
    fewest, most, choices = POSITIONALS[parsed.command]
    count = len(parsed.positionals)
    if count < fewest and not parsed.help or most is not None and count > most:
        return None  # "the following arguments are required", "unrecognized arguments"
    if choices is not None and any(value not in choices for value in parsed.positionals):
        return None  # "invalid choice"
    return parsed


def program_too_large(code: str) -> "str | None":
    """Why ``code`` is refused as larger than :data:`MAX_PROGRAM` (the message the program's error gives), or
    ``None``. Counting the bytes encodes the text only when its length alone cannot decide."""
    if len(code) <= MAX_PROGRAM // 4:
        return None
    size = len(code) if len(code) > MAX_PROGRAM else len(code.encode("utf-8", "surrogatepass"))
    if size <= MAX_PROGRAM:
        return None
    return (f"the program is too large: more than {MAX_PROGRAM // 1024} KiB ({MAX_PROGRAM:,} bytes) of source, the "
            "most a run accepts (docs/tool-limits.md); it was not run. Put large data in a file and read it, or "
            "split the work over several runs")


def read_program(stream: "Any") -> str:
    """The program a text ``stream`` (stdin, a file) holds, read no further than :data:`MAX_PROGRAM` decides:
    one character past it is kept, so :func:`program_too_large` refuses it, and nothing more is read."""
    return str(stream.read(MAX_PROGRAM + 1))


__all__ = ["HELP", "MAX_PROGRAM", "OPTIONS", "POSITIONALS", "Parsed", "parse", "program_too_large", "read_program"]
