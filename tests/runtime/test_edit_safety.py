"""Writes that hold under concurrency and races: no lost edit, no double create, no write through a swapped link,
no split hard link, no rewritten read-only file, owner and mode kept, no temporary file left, Ctrl-C is one line."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from codeact.errors import PolicyError, ToolError
from codeact.tools import atomic, files

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Locks and the journal of temporary files in a folder of this test (never the real ~/.cache)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(atomic, "_cleaned", False)
    return cache


def _environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    config = tmp_path / "userconfig"
    config.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8",
            "PYTHONPATH": str(RUNTIME), "CODEACT_CONFIG_DIR": str(config), "CODEACT_BACKEND": "monty",
            "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}


def _codeact(tmp_path: Path, workspace: Path, code: str, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "codeact", "run", "--timeout", "120", "--code", code],
                            cwd=workspace, env=_environ(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)  # type: ignore[call-overload]


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(f"*{atomic.TMP_SUFFIX}")]


# ------------------------------------------------------------------------------------------- no lost edit (item 5)
def test_two_runs_of_200_edits_each_lose_nothing(tmp_path, fixture_workspace):
    target = fixture_workspace / "shared.txt"
    target.write_text("".join(f"{who}-{i}: todo\n" for i in range(200) for who in "AB"))
    program = ("create(path=f'ready-{WHO}', file_text='')\n"  # start together: each waits (a while) for the other
               "for _ in range(5000):\n"
               "    if len([n for n in view(path='.').split('\\n') if n.startswith('ready-')]) == 2:\n"
               "        break\n"
               "for i in range(200):\n"
               "    edit(path='shared.txt', old_str=f'{WHO}-{i}: todo\\n', new_str=f'{WHO}-{i}: done\\n')\n"
               "print('ok')")
    runs = [_codeact(tmp_path, fixture_workspace, f"WHO = {who!r}\n" + program) for who in "AB"]
    results = [run.communicate(timeout=240) for run in runs]
    for run, (out, err) in zip(runs, results):
        assert (run.returncode, out, err) == (0, "ok\n", "")
    text = target.read_text()
    assert text.count(": done\n") == 400 and ": todo" not in text
    assert not _leftovers(fixture_workspace)


def test_concurrent_creates_of_one_name_only_one_wins(ctx, fixture_workspace):
    for round_ in range(20):
        name = f"race{round_}.txt"
        barrier = threading.Barrier(4)
        won: list[str] = []
        lost: list[BaseException] = []

        def create(text: str) -> None:
            barrier.wait()
            try:
                files.create(ctx, path=name, file_text=text)
                won.append(text)
            except FileExistsError as exc:
                lost.append(exc)

        threads = [threading.Thread(target=create, args=(f"writer {n}\n",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1 and len(lost) == 3, (won, lost)
        assert (fixture_workspace / name).read_text() == won[0]
        assert all("already exists; use edit()" in str(exc) for exc in lost)


def test_create_refuses_a_name_made_after_the_check(ctx, fixture_workspace, monkeypatch):
    (fixture_workspace / "late.txt").write_text("made by someone else\n")
    monkeypatch.setattr(files.os.path, "lexists", lambda _path: False)  # as if it appeared just after the check
    with pytest.raises(FileExistsError, match="late.txt already exists"):
        files.create(ctx, path="late.txt", file_text="mine\n")
    assert (fixture_workspace / "late.txt").read_text() == "made by someone else\n"


def test_the_lock_outlives_the_rename_and_lives_outside_the_workspace(ctx, fixture_workspace, private_cache):
    files.edit(ctx, path="README.md", old_str="# Demo", new_str="# Demo!")
    locks = list((private_cache / "codeact" / "writes" / "locks").iterdir())
    assert len(locks) == 1 and stat.S_IMODE(locks[0].parent.parent.stat().st_mode) == 0o700
    assert not [p for p in fixture_workspace.rglob("*") if "lock" in p.name]
    files.edit(ctx, path="README.md", old_str="# Demo!", new_str="# Demo")  # same file, new inode: same lock
    assert list((private_cache / "codeact" / "writes" / "locks").iterdir()) == locks


# ----------------------------------------------------------------------------------- owner, mode, links (item 8)
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_edit_keeps_the_owner_when_running_as_root(ctx, fixture_workspace):
    target = fixture_workspace / "src" / "app.py"
    os.chown(target, 4321, 4322)
    target.chmod(0o640)
    files.edit(ctx, path="src/app.py", old_str="import sys\n", new_str="import re\n")
    info = target.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o640)
    assert "import re\n" in target.read_text()


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_edit_refuses_a_read_only_file(ctx, fixture_workspace, mode):
    target = fixture_workspace / "README.md"
    before = target.read_text()
    target.chmod(mode)
    with pytest.raises(PolicyError, match=r"README\.md is read-only \(mode 0[0-7]{3}\).*chmod u\+w README\.md"):
        files.edit(ctx, path="README.md", old_str="# Demo", new_str="# Changed")
    assert target.read_text() == before and stat.S_IMODE(target.stat().st_mode) == mode
    assert not _leftovers(fixture_workspace)


def test_edit_refuses_a_file_past_its_share_of_the_run_memory(fixture_workspace, make_ctx):
    from codeact.core.limits import Limits

    ctx = make_ctx(fixture_workspace, limits=Limits(memory=4 << 20))  # edits files of at most 1 MiB
    fits, big = fixture_workspace / "fits.txt", fixture_workspace / "big.txt"
    fits.write_bytes(b"a" * ((1 << 20) - 4) + b"old\n")
    big.write_bytes(b"a" * (1 << 20) + b"old\n")
    assert files.edit(ctx, path="fits.txt", old_str="old", new_str="new") == "edited fits.txt"
    assert fits.read_bytes().endswith(b"anew\n")
    with pytest.raises(ToolError, match=r"^big\.txt is 1,048,580 bytes; edit changes files of at most 1,048,576 "
                                        r"bytes \(a quarter of the run's 4 MiB memory limit.*view\(view_range=\.\.\.\)"):
        files.edit(ctx, path="big.txt", old_str="old", new_str="new")
    assert big.read_bytes().endswith(b"aold\n") and not _leftovers(fixture_workspace)


def test_edit_refuses_a_file_with_other_hard_links(ctx, fixture_workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("shared text\n")
    os.link(outside, fixture_workspace / "linked.txt")  # its other name lies outside the workspace
    with pytest.raises(PolicyError, match=r"linked\.txt has 2 hard links; editing it would split them"):
        files.edit(ctx, path="linked.txt", old_str="shared", new_str="changed")
    assert outside.read_text() == "shared text\n" and outside.stat().st_nlink == 2


_SWAPPER = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
sub, link, seconds = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3])
print("ready", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:  # renameat2(RENAME_EXCHANGE): sub is a folder, then a link to outside, never missing
    if libc.renameat2(-100, sub, -100, link, 2) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


def _can_exchange(tmp_path: Path) -> bool:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        (tmp_path / "x1").mkdir()
        (tmp_path / "x2").symlink_to(tmp_path)
        return libc.renameat2(-100, str(tmp_path / "x1").encode(), -100, str(tmp_path / "x2").encode(), 2) == 0
    except (OSError, AttributeError):
        return False


def _swappable(workspace: Path, outside: Path, inside: dict[str, str], beyond: dict[str, str]) -> tuple[Path, Path]:
    """``workspace/sub`` holding the files ``inside`` (name: text) and ``workspace/sub.link``, a link to the folder
    ``outside`` holding ``beyond``: the two paths :func:`_swapping` exchanges."""
    outside.mkdir()
    for name, text in beyond.items():
        (outside / name).write_text(text)
    sub = workspace / "sub"
    sub.mkdir()
    for name, text in inside.items():
        (sub / name).write_text(text)
    link = workspace / "sub.link"
    link.symlink_to(outside, target_is_directory=True)
    return sub, link


@contextmanager
def _swapping(sub: Path, link: Path, seconds: str) -> Iterator[subprocess.Popen[str]]:
    """A host process that exchanges ``sub`` and ``link`` (:data:`_SWAPPER`) for ``seconds``, started and ready;
    the block runs while ``poll()`` is None, and the process must end well."""
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(sub), str(link), seconds], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
    try:
        yield swapper
    finally:
        swapper.wait(timeout=30)
    assert swapper.returncode == 0, swapper.stderr.read() if swapper.stderr else ""


def test_a_symlink_swapped_in_while_writing_never_redirects_a_write(ctx, fixture_workspace, tmp_path):
    """A second process swaps ``sub`` (a folder) with a link to a folder outside, atomically and in a loop, while
    edits and creates run; nothing outside is ever written (the old path-based write redirected dozens of files)."""
    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    outside = tmp_path / "outside"
    sub, link = _swappable(fixture_workspace, outside, {"f.txt": "inside\n"}, {"f.txt": "outside\n"})
    outcomes: dict[str, int] = {}
    n = 0
    with _swapping(sub, link, "3") as swapper:
        while swapper.poll() is None:
            n += 1
            for call in (lambda: files.create(ctx, path=f"sub/new{n}.txt", file_text=f"new {n}\n"),
                         lambda: files.edit(ctx, path="sub/f.txt", old_str="inside", new_str="inside")):
                try:
                    call()
                    outcomes["ok"] = outcomes.get("ok", 0) + 1
                except (PolicyError, OSError, ToolError) as exc:
                    outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"], outcomes
    assert (outside / "f.txt").read_text() == "outside\n"
    assert outcomes.get("ok", 0) > 0, outcomes  # the writes did run while the link came and went


def test_a_path_through_a_link_inside_the_workspace_still_writes_its_target(ctx, fixture_workspace):
    (fixture_workspace / "alias").symlink_to(fixture_workspace / "src", target_is_directory=True)
    files.edit(ctx, path="alias/app.py", old_str="import sys\n", new_str="import re\n")
    files.create(ctx, path="alias/new.py", file_text="x = 1\n")
    assert "import re\n" in (fixture_workspace / "src" / "app.py").read_text()
    assert (fixture_workspace / "src" / "new.py").read_text() == "x = 1\n"


# --------------------------------------------------------------------------------- temporary files (item 8)
_KILLED_WRITER = """
import os, signal, sys
from codeact.core.limits import Limits
from codeact.core.boundary import Workspace
from codeact.tools import ToolContext, files
os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # dies between writing and renaming
files.edit(ToolContext(workspace=Workspace.at(sys.argv[1]), limits=Limits()), path="README.md",
           old_str="# Demo", new_str="# Half")
"""


def _age(paths: list[Path], seconds: float) -> None:
    when = time.time() - seconds
    for path in paths:
        os.utime(path, (when, when))


def test_a_killed_write_leaves_the_file_whole_and_the_next_run_removes_its_temporary(tmp_path, fixture_workspace,
                                                                                     private_cache):
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(fixture_workspace)], env=_environ(tmp_path),
                            capture_output=True, text=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (fixture_workspace / "README.md").read_text().startswith("# Demo\n")
    left = _leftovers(fixture_workspace)
    assert [p.name[:len(".README.md.")] for p in left] == [".README.md."]  # named recognisably
    journal = list((private_cache / "codeact" / "writes" / "pending").iterdir())
    assert len(journal) == 1

    fresh = _codeact(tmp_path, fixture_workspace, "edit(path='src/app.py', old_str='import sys', new_str='import re')")
    assert fresh.communicate(timeout=60)[1] == "" and fresh.returncode == 0
    assert _leftovers(fixture_workspace) == left  # too young: it might belong to a write still under way

    _age([*left, *journal], atomic.LEFTOVER_AGE + 60)
    later = _codeact(tmp_path, fixture_workspace, "edit(path='src/app.py', old_str='import re', new_str='import sys')")
    assert later.communicate(timeout=60)[1] == "" and later.returncode == 0
    assert _leftovers(fixture_workspace) == []
    assert list((private_cache / "codeact" / "writes" / "pending").iterdir()) == []


@pytest.mark.usefixtures("private_cache")
def test_a_temporary_file_whose_writer_holds_its_lock_is_kept(fixture_workspace):
    import fcntl

    tmp = fixture_workspace / f".README.md.abc123{atomic.TMP_SUFFIX}"
    tmp.write_text("half")
    marker = atomic.private_dir() / "pending" / "abc123"
    marker.write_text(str(tmp))
    _age([tmp, marker], atomic.LEFTOVER_AGE + 60)
    with open(tmp, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert atomic.clean_leftovers() == [] and tmp.exists() and marker.exists()
    assert atomic.clean_leftovers() == [tmp]
    assert not tmp.exists() and not marker.exists()


@pytest.mark.usefixtures("private_cache")
def test_cleaning_never_removes_what_is_not_a_temporary_file(fixture_workspace):
    victim = fixture_workspace / "README.md"
    marker = atomic.private_dir() / "pending" / "forged"
    marker.write_text(str(victim))
    _age([victim, marker], atomic.LEFTOVER_AGE + 60)
    assert atomic.clean_leftovers() == [] and victim.exists()


# ------------------------------------------------------------------------------------------------ Ctrl-C (item 8)
def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell without job control starts a background command


@pytest.mark.parametrize("program, whole_group, entry, ignored", [
    ('bash(command="touch started; sleep 30")', True, "module", False),  # Ctrl-C in a terminal: the worker too
    ('bash(command="touch started; sleep 30")', False, "module", False),  # kill -INT of the launcher alone
    ('bash(command="touch started")\nx = 0\nfor i in range(10**9):\n    x += i', True, "module", False),
    # started with SIGINT ignored (`.ci/run &` from a script: the whole suite inherits it): Ctrl-C still ends the run
    ('bash(command="touch started; sleep 30")', True, "module", True),
    ('bash(command="touch started")\nx = 0\nfor i in range(10**9):\n    x += i', True, "module", True),
    ('bash(command="touch started; sleep 30")', False, "launcher", True),  # the thin client of the warm server
])
def test_sigint_prints_one_line_and_exits_130(tmp_path, fixture_workspace, program, whole_group, entry, ignored):
    popen: dict[str, object] = {"start_new_session": True}
    if ignored:
        popen["preexec_fn"] = _ignore_sigint
    if entry == "module":
        run = _codeact(tmp_path, fixture_workspace, program, **popen)
    else:  # as the stamped launcher starts it
        run = subprocess.Popen([sys.executable, "-S", "-c", "from codeact.client import entry; entry()", "run",
                                "--timeout", "120", "--code", program], cwd=fixture_workspace, env=_environ(tmp_path),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               **popen)  # type: ignore[call-overload]
    deadline = time.monotonic() + 30
    while not (fixture_workspace / "started").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.02)
    time.sleep(0.3)
    if whole_group:
        os.killpg(run.pid, signal.SIGINT)
    else:
        os.kill(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=30)
    assert (run.returncode, out, err) == (130, "", "codeact: interrupted\n")


def test_the_program_sees_a_refused_edit_as_permission_error_with_a_workspace_path(run_program, fixture_workspace):
    (fixture_workspace / "README.md").chmod(0o444)
    result = run_program("try:\n    edit(path='README.md', old_str='# Demo', new_str='# X')\n"
                         "except PermissionError as exc:\n    print('refused:', exc)")
    assert result.ok, result.error
    assert result.stdout.startswith("refused: README.md is read-only (mode 0444)")
    assert str(fixture_workspace) not in result.stdout


@pytest.mark.usefixtures("fixture_workspace")
def test_a_file_on_the_path_is_named_not_called_a_race(ctx):
    with pytest.raises(NotADirectoryError, match=r"cannot write README\.md/x\.txt: 'README\.md' on its path is a file"):
        files.create(ctx, path="README.md/x.txt", file_text="x\n")
