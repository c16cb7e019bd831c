"""Limits: each tripped limit stops the program promptly and is reported as what it is; caps are visible."""
from __future__ import annotations

import os
import time

import pytest

from codeact.core.limits import Limits
from codeact.tools import shell

MARGIN = 2.0  # seconds allowed beyond a time limit on a loaded 2-core machine


def test_infinite_loop_stops_at_the_timeout(run_program):
    started = time.monotonic()
    result = run_program("while True:\n    pass", limits=Limits(timeout=1))
    elapsed = time.monotonic() - started
    assert not result.ok and result.error.type == "TimeoutError"
    assert "1 s time limit" in result.error.message
    assert 1.0 <= elapsed < 1.0 + MARGIN


def test_loop_of_tool_calls_stops_at_the_timeout(run_program):
    started = time.monotonic()
    result = run_program('while True:\n    glob(pattern="*.md")', limits=Limits(timeout=1))
    assert not result.ok and result.error.type == "TimeoutError"
    assert time.monotonic() - started < 1.0 + MARGIN


def test_memory_bomb_is_stopped(run_program):
    result = run_program('x = []\nwhile True:\n    x.append("a" * 1000000)', limits=Limits(memory=64 * 1024 * 1024))
    assert not result.ok and result.error.type == "MemoryError"
    assert "64 MiB memory limit" in result.error.message


def test_big_single_allocation_is_stopped(run_program):
    result = run_program('s = "a" * (10 ** 10)\nlen(s)', limits=Limits(memory=64 * 1024 * 1024))
    assert not result.ok and result.error.type == "MemoryError"


def test_deep_recursion_is_stopped(run_program):
    result = run_program("def f(n):\n    return f(n + 1)\nf(0)", limits=Limits(recursion=200))
    assert not result.ok and result.error.type == "RecursionError"


def test_5000_tool_calls_succeed(run_program):
    result = run_program('n = 0\nfor i in range(5000):\n    n += len(view(path="config/app.json"))\nn')
    assert result.ok, result.error
    assert result.result == 5000 * 56
    assert len(result.tool_calls) == 5000 and all(c.ok for c in result.tool_calls)


def test_tool_call_limit_is_reported(run_program):
    result = run_program('for i in range(50):\n    view(path="README.md")', limits=Limits(tool_calls=20))
    assert not result.ok
    assert "tool call limit of 20 reached" in result.error.message
    assert len([c for c in result.tool_calls if c.ok]) == 20


def test_printed_output_cap_is_visible(run_program, fixture_workspace, tmp_path):
    from codeact.core.outputs import present

    result = run_program('for i in range(100):\n    print("x" * 99)', limits=Limits(output=1000))
    assert result.ok and result.stdout == ("x" * 99 + "\n") * 100  # the run keeps it all, for the output store
    out, err = present(result, cap=1000, workspace=fixture_workspace, environ={"XDG_RUNTIME_DIR": str(tmp_path)})
    assert err == "" and len(out) <= 1000 and out.startswith("x" * 99 + "\n")  # the cap applies to what is printed
    lines = out.splitlines()  # 8 whole lines fit beside the cut line, which takes the middle: 4 before, 4 after
    assert lines[:4] == ["x" * 99] * 4 and lines[5:] == ["x" * 99] * 4
    assert lines[4].startswith("[cut: 9200 more bytes, 92 lines; read them with ")
    assert lines[4].endswith(", first_line=5)]")


def test_tool_result_cap_is_visible_for_text(run_program):
    from codeact.core.tool import tool_from_function

    def long_text() -> str:
        """A long text."""
        return "y" * 5000

    result = run_program("long_text()", limits=Limits(tool_result=1000),
                         tools={"long_text": tool_from_function(long_text, source="user")})
    assert result.ok, result.error
    assert result.result == "y" * 1000 + "\n... [truncated 4000 more bytes; narrow your query]"


def test_view_of_a_huge_file_reads_only_what_fits(run_program, fixture_workspace):
    (fixture_workspace / "big.txt").write_text("y" * 5000 + "\nlast line\n")
    result = run_program('[view(path="big.txt"), view(path="big.txt", view_range=[2, 2])]',
                         limits=Limits(tool_result=1000))
    assert result.ok, result.error
    whole, line2 = result.result
    assert whole == "y" * 750 + ("\n... [truncated 4261 more bytes; read on with view_range=[first, last], "
                                 "or grep for what you need]")
    assert line2 == "last line\n"
    too_long = run_program('view(path="big.txt", view_range=[1, -1])', limits=Limits(tool_result=1000))
    assert too_long.result == "y" * 750 + ("\n... [truncated line 1: it is longer than the tool-result limit; its "
                                           "first 750 bytes are shown]")
    assert too_long.notes == ["view(): line 1 of big.txt is longer than the 1,000-byte tool-result limit: returned "
                              "its first 750 bytes; read the rest of it with bash (cut -c, head -c) or grep, the "
                              "lines after it with view_range=[2, -1]"]


def test_view_range_reads_a_long_line_in_chunks_and_cuts_it_at_a_character(run_program, fixture_workspace):
    (fixture_workspace / "long.txt").write_bytes(b"short\n" + "é".encode() * 3_000_000 + b"\nafter\n")
    result = run_program('[view(path="long.txt", view_range=[2, 2]), view(path="long.txt", view_range=[3, 3]), '
                         'view(path="long.txt", view_range=[1, 2])]', limits=Limits(tool_result=1000))
    assert result.ok, result.error
    line2, line3, both = result.result
    assert line2 == "é" * 375 + ("\n... [truncated line 2: it is longer than the tool-result limit; its first 750 "
                                 "bytes are shown]")
    assert line3 == "after\n"
    assert both == "short\n\n... [truncated at line 2: the range is longer than the tool-result limit; ask for fewer lines]"


def test_tool_result_cap_is_visible_for_lists(run_program, fixture_workspace):
    (fixture_workspace / "many.txt").write_text("hit\n" * 500)
    program = 'r = grep(pattern="hit", path="many.txt")\nfor h in r:\n    n = h["line"]\n[len(r), r[-1]["line"]]'
    result = run_program(program, limits=Limits(tool_result=2000))
    assert result.ok, result.error  # the list keeps its item type: a loop over the rows does not trip on a marker
    count, last = result.result
    assert 0 < count < 500 and last == count
    assert result.notes == [f"grep(): returned {count} of 500 matching lines, the first in path order (the rest "
                            "pass the 2,000-byte tool-result limit; narrow pattern, glob= or path= (one folder at a "
                            "time))"]


def test_bash_output_is_capped_visibly(run_program):
    result = run_program('bash(command="head -c 3000 /dev/zero | tr \\"\\\\0\\" z")["stdout"]',
                         limits=Limits(tool_result=1000))
    assert result.ok, result.error
    assert result.result == "z" * 1000 + "\n... [truncated 2000 more bytes; narrow your query]"


def test_bash_timeout_kills_the_process_group(ctx):
    started = time.monotonic()
    marker = _unusual_sleep()  # a pid from inside the call may be its namespace's, not the host's: match by argv
    result = shell.bash(ctx, command=f"sleep {marker} & sleep 30; echo never", timeout=1)
    assert time.monotonic() - started < 1 + MARGIN
    assert result["exit_code"] == 124
    assert result["stdout"] == ""
    assert "did not finish within 1 s and was killed" in result["stderr"]
    assert _none_running(marker), f"the child 'sleep {marker}' survived its group's kill"


def test_bash_timeout_is_capped_by_the_run_time_limit(fixture_workspace, make_ctx):
    from codeact.errors import ToolTimeout

    quick = make_ctx(fixture_workspace, limits=Limits(timeout=0.5))
    started = time.monotonic()
    with pytest.raises(ToolTimeout, match=r"^bash\(\) was stopped at the run's deadline while running 'sleep 10'"):
        shell.bash(quick, command="sleep 10", timeout=60)  # the run's limit comes first: the call fails
    assert time.monotonic() - started < 0.5 + MARGIN


def test_bash_background_children_are_stopped_when_it_returns(ctx):
    marker = _unusual_sleep()
    result = shell.bash(ctx, command=f"(sleep {marker} >/dev/null 2>&1 &); echo done")
    assert result == {"stdout": "done\n", "stderr": "", "exit_code": 0}
    assert _none_running(marker), f"the background 'sleep {marker}' outlived the call"


def _unusual_sleep() -> str:
    """A sleep length no other process uses: what the host's process table is searched for."""
    import random

    return str(random.randrange(1_000_000, 9_000_000))


def _none_running(marker: str, wait: float = 3.0) -> bool:
    """Whether no live process runs ``sleep <marker>`` (within ``wait`` seconds; a zombie counts as gone)."""
    import subprocess

    end = time.monotonic() + wait
    while time.monotonic() < end:
        found = subprocess.run(["pgrep", "-f", f"^sleep {marker}$"], capture_output=True, text=True).stdout.split()
        if not [pid for pid in found if not _zombie(int(pid))]:
            return True
        time.sleep(0.05)
    for pid in found:
        os.kill(int(pid), 9)
    return False


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


@pytest.mark.parametrize("bad", [{"timeout": 0}, {"memory": -1}, {"tool_calls": "many"}, {"timeout": float("nan")},
                                 {"timeout": float("inf")}, {"memory": float("inf")}])
def test_bad_limits_are_refused(bad):
    from codeact.errors import UsageError
    with pytest.raises(UsageError):
        Limits().merged(bad) if "tool_calls" in bad else Limits(**bad)
    with pytest.raises(UsageError):  # as a flag or a CODEACT_* variable gives them: text
        Limits().merged({name: str(value) for name, value in bad.items()})


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0])
def test_bash_refuses_a_timeout_that_is_not_a_positive_finite_number(ctx, timeout):
    marker = _unusual_sleep()
    with pytest.raises(ValueError, match="timeout must be a positive, finite number of seconds"):
        shell.bash(ctx, command=f"sleep {marker}", timeout=timeout)
    assert _none_running(marker, wait=0.5), "the command started although its timeout was refused"


def test_bash_leaves_nothing_running_when_reading_its_output_fails(ctx, monkeypatch):
    marker = _unusual_sleep()

    def failing(*_args, **_kw):
        time.sleep(0.3)  # the command is running by now
        raise RuntimeError("the pumping failed")

    monkeypatch.setattr(shell, "_pump", failing)
    with pytest.raises(RuntimeError, match="the pumping failed"):
        shell.bash(ctx, command=f"sleep {marker} & (setsid sleep {marker} &); sleep {marker}")
    assert _none_running(marker), f"'sleep {marker}' outlived a call whose pumping failed"


def test_a_run_writes_no_more_than_its_write_limit_and_says_so(run_program, fixture_workspace):
    """A runaway write loop stops at the run's ``writes`` limit (issue 40: one run filled a 64 MB disk in 2.2 s):
    the call past it is refused with a catchable error, a note says so, and what was written before stays whole."""
    program = """
written = 0
try:
    for i in range(100):
        create(path=f"out/f{i}.txt", file_text="x" * 1000)
        written += 1
except Exception as error:
    print("stopped:", error)
written
"""
    result = run_program(program, limits=Limits(writes=10_500))
    assert result.ok, result.error
    assert result.result == 10
    assert "past its write limit of 10,500 bytes" in result.stdout and "CODEACT_WRITES" in result.stdout
    assert any("write limit" in note for note in result.notes)
    assert sorted(p.name for p in (fixture_workspace / "out").iterdir()) == sorted(f"f{i}.txt" for i in range(10))
    assert all(p.read_text() == "x" * 1000 for p in (fixture_workspace / "out").iterdir())


def test_edits_count_against_the_write_limit_per_run(run_program, fixture_workspace):
    (fixture_workspace / "grow.txt").write_text("a\n")
    grow = 'for _ in range(3):\n    edit(path="grow.txt", old_str="a\\n", new_str="a\\n" + "b" * 400)\n'
    # an edit writes the whole file again: 402 + 802 bytes fit in 1,300, the third (1,202 more) does not
    refused = run_program(grow, limits=Limits(writes=1300))
    assert not refused.ok and "write limit of 1,300 bytes" in refused.error.message
    assert (fixture_workspace / "grow.txt").read_text().count("b") == 800
    again = run_program('edit(path="grow.txt", old_str="a\\n", new_str="a\\n")', limits=Limits(writes=1300))
    assert again.ok, again.error  # a new run has its own budget


def test_the_write_limit_is_raised_from_the_environment():
    assert Limits.from_env({"CODEACT_WRITES": "1048576"}).writes == 1024 * 1024
    assert Limits().described()["writes"] == "128 MiB"


def test_view_range_stops_at_the_run_deadline(fixture_workspace, make_ctx):
    from codeact.core.limits import Deadline
    from codeact.errors import ToolTimeout
    from codeact.tools import files

    (fixture_workspace / "lines.txt").write_text("x\n" * 100_000)
    spent = Deadline(0.01)
    time.sleep(0.02)
    with pytest.raises(ToolTimeout, match=r"^view\(\) was stopped at the run's deadline while reading lines.txt"):
        files.view(make_ctx(fixture_workspace, deadline=spent), path="lines.txt", view_range=[99_999, 100_000])
