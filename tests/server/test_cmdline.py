"""One reader of a command line: what ``codeact.cmdline.parse`` reads (the thin client, the server's abandonment)
is what argparse reads for the same argv, option by option, and the table is the argparse definition's."""
from __future__ import annotations

import argparse
from typing import Any

import pytest

from codeact import cmdline
from codeact.cli import build_parser
from codeact.server.runs import GRACE_S, wall_limit


def _argparse(argv: list[str]) -> argparse.Namespace | None:
    try:
        return build_parser(argv[0]).parse_args(argv)
    except SystemExit:
        return None


def _sub_actions(command: str) -> list[argparse.Action]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices[command]._actions)


@pytest.mark.parametrize("command", sorted(cmdline.OPTIONS))
def test_the_table_is_the_argparse_definition(command: str) -> None:
    options = {s: a.nargs != 0 for a in _sub_actions(command) for s in a.option_strings if s not in cmdline.HELP}
    assert options == cmdline.OPTIONS[command]
    arity = {None: (1, 1), "?": (0, 1), "+": (1, None), "*": (0, None)}
    positionals = [a for a in _sub_actions(command) if not a.option_strings]
    assert len(positionals) == 1
    fewest, most = arity[positionals[0].nargs]  # type: ignore[index]
    choices = tuple(positionals[0].choices) if positionals[0].choices else None
    assert cmdline.POSITIONALS[command] == (fewest, most, choices)


CASES = [
    ["run", "--code", "print(1)"],
    ["run", "--timeout=7", "--code", "1"],
    ["run", "--timeout", "7", "-"],
    ["run", "--code", "-"],  # the program is "-": nothing is read from stdin
    ["run", "--code=-"],
    ["run", "--file", "p.py", "--workspace=sub"],
    ["run", "--workspace", "a", "--workspace", "b", "--code", "1"],  # the last one wins
    ["run", "--code", "1", "--timeout", "-5"],  # a negative number is a value
    ["run", "--code", "1", "--timeout", "-.5"],
    ["run", "--code", "--json"],  # argparse: expected one argument
    ["run", "--code"],
    ["run", "--json=1", "--code", "1"],  # argparse: ignored explicit argument
    ["run", "--works", "x", "--code", "1"],  # no abbreviations
    ["run", "--", "-"],
    ["run", "--code", "-x + 1"],  # a space: a value, though it starts with "-"
    ["run", "--code", "-x"],  # an unknown option: argparse refuses
    ["run", "--code", "--"],
    ["run", "--code="],
    ["run", "--code", "1", "-"],
    ["run", "-", "-"],
    ["search", "--foo=a b", "x"],
    ["search", "-1", "--limit", "-2"],
    ["run", "--session", "s", "--json", "--backend", "monty", "-"],
    ["tools", "--workspace=w", "--json"],
    ["describe", "grep", "--workspace", "w"],
    ["search", "a", "b", "--limit=3", "--workspace", "w"],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda a: " ".join(a))
def test_parse_reads_what_argparse_reads(argv: list[str]) -> None:
    got, want = cmdline.parse(argv), _argparse(argv)
    if want is None:
        assert got is None
        return
    assert got is not None
    for action in _sub_actions(argv[0]):
        if not action.option_strings or action.dest == "help":
            continue
        option = max(action.option_strings, key=len)
        value: Any = getattr(want, action.dest)
        if action.nargs == 0:
            assert got.options.get(option, False) == value, option
        elif got.value(option) is None:
            assert value == action.default, option
        else:
            assert (action.type or str)(got.value(option)) == value, option
    assert got.reads_stdin == (argv[0] == "run" and want.stdin == "-")
    positional = [a.dest for a in _sub_actions(argv[0]) if not a.option_strings]
    given = [getattr(want, name) for name in positional]
    assert got.positionals == [v for value in given for v in (value if isinstance(value, list) else [value])
                               if v is not None]


@pytest.mark.parametrize("argv, timeout", [
    (["run", "--timeout=7", "--code", "1"], 7.0),
    (["run", "--timeout", "3", "--code", "1"], 3.0),
    (["run", "--code", "--timeout"], 30.0),  # a program, not a limit
    (["run", "--code", "1"], 30.0),
])
def test_the_servers_abandonment_reads_the_timeout_as_argparse_does(argv: list[str], timeout: float) -> None:
    assert wall_limit({"argv": argv, "env": {}}) == timeout + GRACE_S


def test_the_timeout_variable_when_no_flag() -> None:
    assert wall_limit({"argv": ["run", "--code", "1"], "env": {"CODEACT_TIMEOUT": "4"}}) == 4 + GRACE_S

