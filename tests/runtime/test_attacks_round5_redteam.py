"""Red team, round 5 (independent): attacks on issue 40's fixes (the user's hooks and a repository's launcher,
``import glob`` walked inside the workspace, bounded host module calls), non-UTF-8 names and tracked files under
``.gitignore``. Each test is one attempt that broke through: it fails until the hole is closed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, rlimits and the warm server: POSIX")


def _host_call(name: str, args_src: str, kwargs_src: str, *, memory: int, timeout: float,
               wall: float = 120) -> tuple[str, float]:
    """``HostModules.call`` in a child Python (capped at 3 GiB of address space, so a break cannot take the
    machine): what it printed (RAN <type> <len> or RAISED <type>) and how long the call took."""
    script = (f"import sys, time; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
              "from codeact.backends.host_modules import HostModules\n"
              f"hm = HostModules(None, memory={memory}, timeout={timeout})\n"
              f"args = {args_src}\nkwargs = {kwargs_src}\n"
              "t = time.monotonic()\n"
              "try:\n"
              f"    value = hm.call({name!r}, args, kwargs)\n"
              "    print('RAN', type(value).__name__, len(value), round(time.monotonic() - t, 2))\n"
              "except BaseException as exc:\n"
              "    print('RAISED', type(exc).__name__, round(time.monotonic() - t, 2), str(exc)[:200])\n")
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=wall)
    except subprocess.TimeoutExpired:
        return f"STILL RUNNING after {wall} s", time.monotonic() - start
    return done.stdout + done.stderr, time.monotonic() - start


# ------------------------------------------------------------------------------ host modules: memory estimates
@pytest.mark.parametrize(("name", "args_src", "kwargs_src"), [
    # pprint indents every nested line by `indent`: 2,000 items x 100,000 spaces = 200 MB from 16 kB of arguments
    ("pprint.pformat", "([0] * 2000,)", "{'indent': 100000, 'width': 1}"),
    # urlencode(doseq=True) repeats the key once per value: a 1 MB key x 300 values = 300 MB
    ("urllib.parse.urlencode", "({'k' * 1000000: [''] * 300},)", "{'doseq': True}"),
], ids=["pprint-indent", "urlencode-doseq-key"])
def test_a_host_module_call_cannot_make_more_than_the_run_memory_in_the_host(name: str, args_src: str,
                                                                           kwargs_src: str) -> None:
    """_work estimates ~16 kB / ~1 MB for these, so they run in the host process with no limit; through the
    launcher the first grew the warm server from 31 MB to 1.98 GB (VmHWM) with indent=500000, and a run's limit
    is 256 MiB. The call must be refused (MemoryError) or run in the limited child, never make 200+ MB here."""
    shown, _ = _host_call(name, args_src, kwargs_src, memory=64 << 20, timeout=60)
    assert shown.startswith("RAISED MemoryError"), shown


def test_difflib_ndiff_of_two_long_lines_stops_at_the_run_deadline(tmp_path: Path) -> None:
    """ndiff compares the characters of every pair of lines (SequenceMatcher.ratio on each pair), but _work counts
    line pairs only: two 40,000-character lines are 'small', run in the host process, and go on past the deadline
    (through the launcher, in process: faulthandler's host traceback and no TimeoutError for the program)."""
    args = ("(lambda r: ([''.join(chr(0x4e00 + r.randrange(500)) for _ in range(40000)) + '\\n'],"
            " [''.join(chr(0x4e00 + r.randrange(500)) for _ in range(40000)) + '\\n']))"
            "(__import__('random').Random(1))")
    shown, took = _host_call("difflib.ndiff", args, "{}", memory=256 << 20, timeout=1, wall=120)
    assert "RAISED TimeoutError" in shown and took < 5, (shown, took)
