"""Red team, round 21 (part C): the limits of what runs on the host for a program, after 5847a70 (host modules'
estimates as upper bounds), 87b136f (the git config read by the run's deadline) and 2255311 (huge ints written as
hex). Each test failed while its finding was open; the timing-dependent ones leave wide margins (10 s where the run
is limited to 2 or 3 s) and, fixed, end within a few seconds."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round14_limits import _host_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX resource limits and /proc")

MiB = 1 << 20


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    return ws, base / "home"


# ------------------------------------------ host modules: estimates that are still not upper bounds (time)
def test_textwrap_of_a_long_blank_run_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """5847a70 counts ``_handle_long_word``'s quadratic cut for *words* only: ``_long_words`` scans
    ``[^\\t\\n\\x0b\\x0c\\r ]+``. But with ``drop_whitespace=False`` a run of blanks is a chunk too, and one
    longer than the line is cut by the same ``_handle_long_word`` (``chunk[end:]`` copied for every line). The
    blanks need not be in the text: ``'a' + '\\t' * 20`` with ``tabsize=49_000`` is 21 characters that
    ``expand_tabs`` makes 980,000 blanks. The estimate (``expanded * (2 + indents)`` = 1,960,042, plus no long
    word) is under ``IN_PROCESS_WORK``, so the call runs in the host: 480,000 blanks took 3.7 s in plain CPython
    3.11, and this run, limited to 2 s, took 22.9 s (``runner.run``; through ``CODEACT_SERVER=0`` it would end by
    faulthandler's backstop with a stack dump). Fix: count blank runs (after tab expansion: ``tabsize`` per tab)
    in ``_long_words`` when ``drop_whitespace`` is false, or send any ``wrap``/``fill`` with
    ``drop_whitespace=False`` and a blank run longer than ``width`` to the child."""
    ws, home = _workspace(tmp_path)
    code = ("import textwrap\nlines = textwrap.wrap('a' + '\\t' * 20, width=1, drop_whitespace=False, "
            "tabsize=49_000)\nprint('made', len(lines))\n")
    out, _, took = _host_run(ws, home, code, memory=256 * MiB, timeout=2, wait=40)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


def test_configparser_defaults_that_interpolate_stop_at_the_run_deadline(tmp_path: Path) -> None:
    """``_config_steps`` sends a config text with ``%(`` to the child (interpolation is exponential), but
    ``codeact_host.configparse(text, defaults)`` interpolates the *defaults* too: every section's options include
    them and ``_configparse`` calls ``parser.get`` on each. ``ConfigParser(defaults={'v1': '%(v0)s' * 8, ...,
    'v8': '%(v7)s' * 8}).read_string('[s]\\n')`` has no ``%(`` in its text, is estimated at a few hundred steps and
    runs in the host: 8**8 expansions (a 16-million-character value), 37 s for a run limited to 2 s. Fix: look
    for ``%(`` in the defaults' keys and values as well (or size the interpolation from both)."""
    ws, home = _workspace(tmp_path)
    code = ("import configparser\nd = {'v0': 'x'}\nfor i in range(1, 9):\n"
            "    d['v' + str(i)] = ('%(v' + str(i - 1) + ')s') * 8\n"
            "p = configparser.ConfigParser(defaults=d)\np.read_string('[s]\\n')\nprint('read', len(p.get('s', 'v8')))\n")
    out, _, took = _host_run(ws, home, code, memory=256 * MiB, timeout=2, wait=40)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


def test_statistics_of_two_million_floats_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``_work`` bounds ``statistics.*`` at ``size * max(1, widest int's words)``: 1,990,000 floats are 1,990,004
    steps, under ``IN_PROCESS_WORK``, so ``pstdev`` runs in the host. But CPython's ``_sum`` and ``_ss`` take each
    float's exact ratio (a denominator up to 2**1074) in a Python loop with big-int products: 3.7 s in plain
    CPython 3.11 for these floats (not a bound of 2 million cheap steps). Here the list is built in 1.5 s, the call
    starts before the 3 s deadline, and the run ended after 11 s. Fix: count a float's exact arithmetic (tens of
    steps each, more for wide exponents) or run a statistics call over some 100,000 items in the child."""
    ws, home = _workspace(tmp_path)
    code = ("import statistics\nxs = [(1.0 + i / 7919) * 2.0 ** (i % 2074 - 1074) for i in range(1_990_000)]\n"
            "print('built')\nprint(statistics.pstdev(xs))\n")
    out, _, took = _host_run(ws, home, code, memory=256 * MiB, timeout=3, wait=60)
    assert took < 8.5, f"a run limited to 3 s had not ended after {took:.1f} s: {out[-300:]}"


# ------------------------------------------------------------ host modules: memory of a host call
def test_configparser_defaults_are_bounded_by_the_run_memory(tmp_path: Path) -> None:
    """The same uncounted defaults, for memory: ``made`` is ``size * 2`` (2 MB here), yet three levels of eight
    references to a 700,000-character default make a 358-million-character value in the host, far past the
    run's 64 MiB limit (a default of 1,000,000 characters goes to the child: its size alone passes
    ``IN_PROCESS_WORK``). With a 500,000-character default the host process peaked at 591 MiB and the run
    ended with a RuntimeError (``request frame of 293000352 bytes exceeds the maximum``), the program's output
    lost. On the warm server that is the server's memory. Fix: as above; in the child the answer is refused by
    its size (but see the next test)."""
    ws, home = _workspace(tmp_path)
    code = ("import configparser\nd = {'v0': 'x' * 700_000}\nfor i in range(1, 4):\n"
            "    d['v' + str(i)] = ('%(v' + str(i - 1) + ')s') * 8\n"
            "try:\n    p = configparser.ConfigParser(defaults=d)\n    p.read_string('[s]\\n')\n"
            "    print('read', len(p.get('s', 'v3')))\nexcept Exception as exc:\n    print(type(exc).__name__)\n")
    out, peak, _ = _host_run(ws, home, code, memory=64 * MiB, timeout=20, wait=90)
    assert 0 < peak < 400 * MiB, f"the host peaked at {peak / MiB:.0f} MiB for a run limited to 64 MiB: {out[-300:]}"


def test_a_child_answer_past_the_run_memory_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """``_in_child`` refuses an answer whose pickle is longer than ``memory // 12`` bytes, but only after
    ``subprocess.run(capture_output=True)`` has read all of it: the child may write up to its address-space limit,
    the run's memory plus 256 MiB. A config text that interpolates (so it goes to the child) to a
    128-million-character value: the refusal is right (``made an answer of 117,000,116 bytes``), yet the host
    process peaked at 256 MiB for a run limited to 64 MiB (31 MiB for a ``print``). Fix: read the child's stdout
    in chunks and kill it once it passes ``answer`` bytes."""
    ws, home = _workspace(tmp_path)
    code = ("import configparser\ntext = '[s]\\nv0 = ' + 'x' * 200_000 + '\\nv1 = ' + '%(v0)s' * 8 + '\\nv2 = ' + "
            "'%(v1)s' * 8 + '\\nv3 = ' + '%(v2)s' * 8 + '\\n'\n"
            "try:\n    p = configparser.ConfigParser()\n    p.read_string(text)\n    print('read')\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out, peak, _ = _host_run(ws, home, code, memory=64 * MiB, timeout=20, wait=90)
    assert "MemoryError" in out, out[-300:]
    assert 0 < peak < 160 * MiB, f"the host peaked at {peak / MiB:.0f} MiB for a run limited to 64 MiB: {out[-300:]}"


# --------------------------------------------------------- the boundary's git config read: its output
def test_the_git_config_listing_is_bounded_in_memory(tmp_path: Path) -> None:
    """87b136f bounds ``git config --list`` in time (the run's deadline) but not its output:
    ``_git_output`` reads git's stdout whole (``communicate``) and ``_git_listing`` decodes and splits it. A
    program's ``bash`` (which may write ``.git/config``) sets ``include.path`` to a file that includes another
    16 times, four levels deep, over a 4,000-character value: 65,536 values, 270 MB of listing from a few KB of
    files (git includes a file again each time it is named; only the depth, 10, is limited). With
    ``--timeout 25`` and a 64 MiB memory limit, the program's ``create()`` ended in a TimeoutError at the deadline
    after the host process peaked at 826 MiB (31 MiB for a ``print``); one more level is 16 times that. On the
    warm server that is the server's memory. Fix: read git's output in chunks and fail closed (the write refused)
    past a bound, e.g. a few MiB or the run's memory limit."""
    ws, home = _workspace(tmp_path)
    code = r"""script = r'''
set -e
git init -q .
d=$(mktemp -d)
printf '[a]\n\tb = %s\n' $(head -c 4000 /dev/zero | tr '\0' x) > $d/c0
for i in 1 2 3 4; do p=$((i-1)); : > $d/c$i; for k in $(seq 16); do printf '[include]\n\tpath = %s\n' "$d/c$p" >> $d/c$i; done; done
printf '[include]\n\tpath = %s\n' "$d/c4" >> .git/config
echo set
'''
print(bash(command=script)['stdout'])
try:
    create(path='notes.txt', file_text='hello')
    print('created')
except Exception as exc:
    print(type(exc).__name__)
"""
    out, peak, _ = _host_run(ws, home, code, memory=64 * MiB, timeout=25, wait=90)
    assert 0 < peak < 300 * MiB, f"the host peaked at {peak / MiB:.0f} MiB for a run limited to 64 MiB: {out[-300:]}"


# ------------------------------------------------------------ --session: many ints near the digit limit
def test_a_session_of_many_long_ints_is_saved_within_the_run_deadline(tmp_path: Path) -> None:
    """To name an int past CPython's 4,300 digits as not kept, ``sessions._flat`` calls ``str(number)`` on every
    int of a flat list wider than ``_WRITABLE_BITS`` (12,900 bits) -- before the list is counted against the
    budget, once per slot (a list holding one int 100,000 times converts it 100,000 times), with no deadline.
    A 4,299-digit int's decimal costs some 240 us (quadratic), so ``x = 10**4299; a = [x] * 100_000`` (800 KB of
    slots in the sandbox) is 24 s or more of walking after a run limited to 2 s: it had not ended after 30 s. With
    ``CODEACT_SERVER=0`` and ``[x + i for i in range(20000)]`` faulthandler's backstop ended the process at 7.1 s
    for a 5 s run (stack dump, ``_flat`` on top, exit 1, output lost). Fix: count the items against the budget
    first, test each distinct int once (by id), and tell a too-long int by its bit length alone (an int of more than
    4,300 * log2(10) bits, about 14,284, is past the limit; fewer is not) instead of writing it."""
    ws, home = _workspace(tmp_path)
    code = "x = 10 ** 4299\na = [x] * 100_000\nprint('ran')\n"
    out, _, took = _host_run(ws, home, code, memory=256 * MiB, timeout=2, session="s", wait=30)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"
