"""Red team, round 20 (part C): the limits of what runs on the host for a program (host modules, the boundary's
git reads, the last value's encoding), after 4ea35b1. Each test fails while its finding is open (strict xfail);
the timing-dependent ones leave wide margins (the open cases take 10 s to minutes where the run is limited to 2 s)
and are not run by default (``run=False``: they would hold a core for the whole ``wait``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_attacks_round14_limits import _host_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX resource limits, FIFOs and /proc")

_REASON = "open (red team round 20, part C): {}"
MiB = 1 << 20


# ------------------------------------------------- host modules: CPython's pure-Python code quadratic in the host
@pytest.mark.parametrize("call", ['textwrap.wrap("ab" * 495_000, width=1)',
                                  'textwrap.fill("ab" * 495_000, width=1)'])
def test_textwrap_of_one_long_word_stops_at_the_run_deadline(tmp_path: Path, call: str) -> None:
    """``host_modules._work`` bounds ``textwrap.wrap``/``fill`` at ``expanded * (2 + indents)`` steps: 990,000
    characters are 1,980,000, under ``IN_PROCESS_WORK`` (2,000,000), so the call runs in the host process, in the
    run's thread, where nothing stops it. But CPython's ``TextWrapper._handle_long_word`` takes ``chunk[:end]``
    and keeps ``chunk[end:]`` for every line it breaks off: a word of n characters at ``width=1`` copies n**2/2
    characters. 990,000 characters took 19 s in plain CPython (400,000: 4 s). Through the command line
    (``CODEACT_SERVER=0 codeact run --timeout 2``) the run ended only by faulthandler's backstop at 3.8 s, with a
    bare stack dump (``_handle_long_word`` on top) and exit 1, the program's output lost; through the warm
    server the run's thread keeps a core busy for the whole call after its run is abandoned. Fix: count a long
    word's break as quadratic (its length squared over ``width``) in ``_work``, or run every ``wrap``/``fill``
    with a word longer than ``width`` in the child."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = f"import textwrap\nlines = {call}\nprint('made', len(lines))\n"
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, wait=40)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


def test_pprint_of_a_long_string_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """``_work`` bounds ``pprint.pformat`` at ``size * ((depth + 2) * indent + 8)``: a 170,000-character string
    is about 1.9 million, under ``IN_PROCESS_WORK``, so it runs in the host. ``width`` is not counted, yet CPython's
    ``PrettyPrinter._pprint_str`` (used once the string's repr is wider than ``width``) builds each chunk word by
    word as ``candidate = current + part`` and tests ``len(repr(candidate))`` each time: with ``width=169_000``
    every one of the 85,000 words reprs a prefix of up to 169,000 characters, some 7 * 10**9 characters. It took
    16.6 s in plain CPython; ``codeact run --timeout 2`` ended at faulthandler's backstop (3.8 s, a stack dump,
    ``_pprint_str`` on top). Fix: count ``width`` (the words times the characters a chunk may reach) in
    ``_work``, or run a ``pformat``/``pprint`` of a string longer than a few thousand characters in the child."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    code = "import pprint\ns = pprint.pformat('a ' * 85_000, width=169_000)\nprint('made', len(s))\n"
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, wait=40)
    assert took < 12, f"a run limited to 2 s had not ended after {took:.0f} s: {out[-300:]}"


# --------------------------------------------------------- the boundary's git config read: a FIFO it includes
def test_a_git_config_that_includes_a_fifo_is_read_by_the_run_deadline(tmp_path: Path) -> None:
    """docs/security.md: the repository's git config is "read at a run's first write of a file, by its deadline:
    past it the write is refused with a ``TimeoutError``". ``boundary._git_listing`` runs ``git config --list``
    with a fixed ``timeout=10``, not the run's deadline. A program's ``bash`` (which may write ``.git/config``, by
    design) sets ``include.path`` to a FIFO nobody writes: git blocks opening it, and the program's next
    ``create()`` waits the full 10 s. With ``codeact run --timeout 2`` and ``CODEACT_SERVER=0`` faulthandler's
    backstop ended the process at 3.8 s with a stack dump (``_git_listing`` > ``subprocess.run`` on top), and the
    ``git -C ws config --list ...`` it had started was left running, re-parented to init and blocked on the FIFO
    for good: a process started for the run outlived it. Through the warm server the run's thread waits 10 s
    past the deadline. Fix: give ``git config --list`` the time left in the run (a ``TimeoutError`` past it, as
    documented), and kill it when the run ends."""
    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    fifo = base / "never-written"
    code = (f"print(bash(command='mkfifo {fifo} && git config include.path {fifo} && echo set')['stdout'])\n"
            "try:\n    create(path='notes.txt', file_text='hello')\n    print('created')\n"
            "except Exception as exc:\n    print(type(exc).__name__)\n")
    out, _, took = _host_run(ws, base / "home", code, memory=256 * MiB, timeout=2, wait=40)
    assert "set" in out, out[-500:]
    assert took < 7, f"a run limited to 2 s took {took:.1f} s (git config waited on the FIFO): {out[-300:]}"


# ------------------------------------------------------------------------ the last value: an int's decimal text
@pytest.mark.parametrize("value", ["10 ** 5000", "[10 ** 5000]", "{'n': 10 ** 5000}"])
def test_a_last_value_of_a_huge_int_is_a_clean_answer(tmp_path: Path, value: str) -> None:
    """``codeact run --json --code "10 ** 5000"``: the sandbox makes the int (its own ``str()`` of it refuses
    past 4,300 digits, as CPython), the run succeeds, and then ``outputs.value_line`` > ``limits.within`` writes it
    with ``json.dumps``, which raises CPython's ``ValueError: Exceeds the limit (4300 digits) for integer string
    conversion``; the fallback ``_repr_into`` calls ``repr`` and raises it again, out of ``present``: the CLI
    prints a host traceback and exits 1, and ``--json`` prints no JSON at all (plain mode loses the program's
    printed output too). ``--session`` names such a global as not kept, cleanly; the last value should be as
    clean (its digits cut, or a note that it was not shown)."""
    from tests.runtime.conftest import base_environ

    base = tmp_path.resolve()
    ws = base / "ws"
    ws.mkdir()
    config = base / "cfg"
    config.mkdir()
    env = base_environ(config, CODEACT_SERVER="0", CODEACT_BACKEND="monty",
                       PYTHONPATH=str(Path(__file__).resolve().parents[2] / "runtime"))
    done = subprocess.run([sys.executable, "-m", "codeact", "run", "--json", "--workspace", str(ws), "--code",
                           f"print('ran')\n{value}\n"], env=env, capture_output=True, text=True, timeout=120, cwd=ws)
    assert "Traceback" not in done.stderr, done.stderr[-1500:]
    shown = json.loads(done.stdout)
    assert "ran" in shown["stdout"], shown
