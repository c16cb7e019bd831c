"""Issue 13, section 3 and issue 24 rule 3: every answer reaches the model — the 16 KiB cap, the cut line, the
store, previous_output.

The Copilot CLI spills a tool result over ~20 KiB into a file the model cannot read in exclusive mode, so a run
prints at most 16 KiB (stdout and stderr together). A cut takes the MIDDLE of the printed output: the head and the
tail are shown, the last value's line and stderr (notes, the error) always are, and a line where the cut is names
the run; the whole output is kept in a private store that ``previous_output`` reads back.
"""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codeact.core.limits import Limits
from codeact.core.outputs import (
    KEEP_RUNS,
    MiB,
    OutputStore,
    Window,
    plain_streams,
    present,
    previous_lines,
    store_folder,
    window,
)
from codeact.errors import ErrorInfo, ToolError
from codeact.runner import RunResult

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
CUT = re.compile(r'\[cut: (\d+) more bytes, (\d+) lines; read them with previous_output\(run="([A-Za-z0-9]{8,})", '
                 r'first_line=(\d+)\)\]')
NUMBERED = "".join(f"{i:04d}\n" for i in range(1, 1001))  # 1,000 lines of 5 bytes


@pytest.fixture
def runtime_dir(tmp_path: Path) -> Path:
    path = tmp_path / "xdg-run"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def env(runtime_dir: Path, tmp_path: Path) -> dict[str, str]:
    return {"XDG_RUNTIME_DIR": str(runtime_dir), "HOME": str(tmp_path / "home")}


def result(stdout: str = "", value: object = None, error: ErrorInfo | None = None) -> RunResult:
    return RunResult(ok=error is None, backend="monty", stdout=stdout, result=value, error=error)


def size(text: str) -> int:
    return len(text.encode())


def cut_in(text: str) -> tuple[re.Match[str], list[str], list[str]]:
    """The cut line of a printed output, and the lines before and after it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if CUT.fullmatch(line))
    match = CUT.fullmatch(lines[at])
    assert match is not None
    return match, lines[:at], lines[at + 1:]


def cut_of(shown: Window) -> tuple[int, int, int]:
    assert shown.cut is not None
    return shown.cut.bytes, shown.cut.lines, shown.cut.first_line


# --------------------------------------------------------------------------------------------------- the window
def test_the_default_cap_is_16_kib():
    assert Limits().output == 16 * 1024
    assert Limits.from_env({"CODEACT_OUTPUT": "100000"}).output == 100_000


def test_output_that_fits_is_untouched():
    out = "x" * 99 + "\n"
    shown = window(out, "", 100)
    assert (shown.out, shown.err, shown.cut, shown.transcript) == (out, "", None, "")
    assert window(out, "", 99).cut is not None  # one byte over


def test_a_cut_takes_the_middle_keeps_whole_lines_and_counts_what_is_left():
    shown = window(NUMBERED, "", 1000)
    # the widest cut line is 103 bytes; with its newline and room for two cut prefixes, 894 bytes: half for the
    # head (447: 89 lines), the rest for the tail (449: 89 lines)
    assert shown.out == NUMBERED[:89 * 5] and shown.tail == NUMBERED[-89 * 5:]
    assert shown.err == ""
    assert cut_of(shown) == (5000 - 890, 1000 - 178, 90)
    assert shown.transcript == NUMBERED
    out, err = shown.streams()
    assert out.splitlines()[89].startswith("[cut: 4110 more bytes, 822 lines;") and err == ""


def test_the_value_line_and_the_notes_always_arrive():
    notes = "note: grep(): returned 1,000 of 7,756 matches\n"
    shown = window(NUMBERED, notes, 1000, value="7756\n")
    out, err = shown.streams()
    assert out.endswith("1000\n7756\n") and err == notes and size(out) + size(err) <= 1000
    assert shown.transcript == NUMBERED + "7756\n" + notes


def test_stderr_is_kept_whole_and_the_cut_points_at_stdout():
    err = "ValueError (line 3): bad\nhint: fix it\n"
    shown = window(NUMBERED, err, 1000)
    assert shown.err == err
    # 894 - 38 bytes of stderr = 856 bytes: 428 for the head (85 lines), 431 left for the tail (86 lines)
    assert shown.out == NUMBERED[:85 * 5] and shown.tail == NUMBERED[-86 * 5:]
    assert cut_of(shown) == (5000 - 425 - 430, 1000 - 85 - 86, 86)
    assert shown.transcript == NUMBERED + err


def test_one_line_too_long_for_the_room_is_shown_cut_and_counted_as_not_shown():
    shown = window("y" * 100_000 + "\n", "", 1000)
    # the widest cut line is 99 bytes here: 1000 - 99 - 3 = 898 bytes of room; the head gets half, one byte of it
    # for the prefix's newline; no whole line is left for the tail
    assert shown.out == "y" * 448 + "\n" and shown.tail == ""
    assert cut_of(shown) == (100_001 - 448, 1, 1)


def test_a_cut_never_splits_a_character():
    shown = window("é" * 10_000, "", 1001)
    assert size(shown.out) <= 1001 and set(shown.out) == {"é", "\n"}


def test_plain_streams_are_what_the_cli_prints():
    err = ErrorInfo("KeyError", "'a'", 2, "the dict has keys: b")
    out, text = plain_streams("hi\n", {"n": 1}, err, ["line 1: unused variable"])
    assert out == 'hi\n{"n": 1}\n'
    assert text == "note: line 1: unused variable\nKeyError (line 2): 'a'\nhint: the dict has keys: b\n"


# --------------------------------------------------------------------------------------------------- present
def test_present_prints_at_most_the_cap_with_the_cut_line_in_the_middle(tmp_path, env):
    out, err = present(result(NUMBERED * 20), cap=16 * 1024, workspace=tmp_path, environ=env)
    assert err == "" and size(out) <= 16 * 1024
    match, head, tail = cut_in(out)
    bytes_, lines, run, first = match.groups()
    assert int(first) == len(head) + 1  # every line shown before the cut line is whole
    assert head == (NUMBERED * 20).splitlines()[:len(head)] and tail == (NUMBERED * 20).splitlines()[-len(tail):]
    assert int(lines) == 20_000 - len(head) - len(tail) and int(bytes_) == 100_000 - (len(head) + len(tail)) * 5
    store = OutputStore.for_workspace(tmp_path, env)
    assert store.read(run) == NUMBERED * 20
    assert previous_lines(store, run, 1001, 1003) == "0001\n0002\n0003\n"


def test_the_error_is_kept_whole_and_the_cut_is_in_stdout(tmp_path, env):
    error = ErrorInfo("ZeroDivisionError", "division by zero", 2)
    out, err = present(result("z" * 30_000 + "\n", error=error), cap=2000, workspace=tmp_path, environ=env)
    assert err == "ZeroDivisionError (line 2): division by zero\n"
    assert CUT.fullmatch(out.splitlines()[-1]) and out.startswith("zzz")
    assert size(out) + size(err) <= 2000


def test_a_value_or_stderr_too_big_for_half_the_room_falls_back_to_a_head_cut(tmp_path, env):
    error = ErrorInfo("ValueError", "e" * 3000, 2)
    out, err = present(result(NUMBERED, error=error), cap=2000, workspace=tmp_path, environ=env)
    assert out == "" or CUT.fullmatch(err.splitlines()[-1])
    assert CUT.fullmatch((out + err).splitlines()[-1]) and size(out) + size(err) <= 2000


def test_present_json_stays_one_object_with_the_cut(tmp_path, env):
    out, err = present(result(NUMBERED, value=[1, 2]), cap=1000, workspace=tmp_path, environ=env, as_json=True)
    data = json.loads(out)
    assert err == "" and out.count("\n") == 1
    assert set(data["cut"]) == {"run", "bytes", "lines"}
    match, head, tail = cut_in(data["stdout"])
    assert match.group(3) == data["cut"]["run"] and tail[-1] == "1000"
    assert (data["cut"]["bytes"], data["cut"]["lines"]) == (int(match.group(1)), int(match.group(2)))
    assert data["result"] == [1, 2]  # the value always arrives
    store = OutputStore.for_workspace(tmp_path, env)
    assert store.read(data["cut"]["run"]) == NUMBERED + "[1, 2]\n"
    small, _ = present(result("a\n", value=3), cap=1000, workspace=tmp_path, environ=env, as_json=True)
    assert json.loads(small)["cut"] is None and json.loads(small)["result"] == 3


def test_present_json_fits_the_cap_after_escaping(tmp_path, env):
    quotes = '"' * 10_000 + "\n"  # 10 KB printed; 20 KB once JSON escapes it
    plain, _ = present(result(quotes), cap=16 * 1024, workspace=tmp_path, environ=env)
    assert plain == quotes  # the plain form fits: nothing cut
    out, _ = present(result(quotes * 3), cap=16 * 1024, workspace=tmp_path, environ=env, as_json=True)
    data = json.loads(out)
    assert size(out) <= 16 * 1024 and data["cut"]["lines"] >= 1
    assert data["stdout"].startswith('"' * 1000) and CUT.fullmatch(data["stdout"].splitlines()[-1])
    store = OutputStore.for_workspace(tmp_path, env)
    assert store.read(data["cut"]["run"]) == quotes * 3  # stored in the plain form
    fits, _ = present(result(quotes), cap=16 * 1024, workspace=tmp_path, environ=env, as_json=True)
    assert size(fits) <= 16 * 1024 and json.loads(fits)["cut"]["lines"] == 1  # only the JSON form is cut


def test_a_run_that_fits_writes_nothing(tmp_path, env, runtime_dir):
    assert present(result("ok\n", value=1), cap=1000, workspace=tmp_path, environ=env) == ("ok\n1\n", "")
    assert list(runtime_dir.iterdir()) == []


def test_an_unusable_store_says_so_instead_of_naming_a_run(tmp_path, env, runtime_dir):
    (runtime_dir / f"codeact-{os.getuid()}").symlink_to(tmp_path)
    out, _ = present(result(NUMBERED), cap=1000, workspace=tmp_path, environ=env)
    lines = out.splitlines()
    unavailable = re.compile(r"\[cut: (\d+) more bytes, (\d+) lines; the output store is unavailable \(.+ is not a "
                             r"folder \(a link\?\)\); print less\]")
    at = next(i for i, line in enumerate(lines) if unavailable.fullmatch(line))
    match = unavailable.fullmatch(lines[at])
    assert match and size(out) <= 1000  # the longer line takes room from the output
    shown = lines[:at] + lines[at + 1:]
    assert lines[:at] == NUMBERED.splitlines()[:at] and len(shown) < 178
    assert (int(match.group(1)), int(match.group(2))) == (5000 - 5 * len(shown), 1000 - len(shown))


# --------------------------------------------------------------------------------------------------- the store
def test_store_location_and_permissions(tmp_path, env, runtime_dir):
    store = OutputStore.for_workspace(tmp_path, env)
    assert store.root.parent == runtime_dir / f"codeact-{os.getuid()}" / "outputs"
    run = store.save("one\ntwo\n")
    assert re.fullmatch(r"[a-z0-9]{12}", run)
    for folder in (store.root, store.root.parent, store.root.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((store.root / f"{run}.txt").stat().st_mode) == 0o600
    assert OutputStore.for_workspace(tmp_path / "other", env).root != store.root  # one folder per workspace


def test_store_falls_back_to_the_cache_folder(tmp_path):
    assert store_folder({"XDG_CACHE_HOME": str(tmp_path / "c")}) == tmp_path / "c" / "codeact" / "outputs"
    assert store_folder({"XDG_RUNTIME_DIR": "relative", "HOME": str(tmp_path)}) == \
        tmp_path / ".cache" / "codeact" / "outputs"


@pytest.mark.usefixtures("runtime_dir")
def test_store_tightens_an_open_folder_and_refuses_a_link(tmp_path, env):
    store = OutputStore.for_workspace(tmp_path, env)
    store.root.parent.mkdir(parents=True, mode=0o755)
    os.chmod(store.root.parent, 0o755)
    store.save("x\n")
    assert stat.S_IMODE(store.root.parent.stat().st_mode) == 0o700
    other = OutputStore.for_workspace(tmp_path / "ws2", env)
    other.root.symlink_to(tmp_path)
    with pytest.raises(OSError, match="not a folder"):
        other.save("x\n")


def test_store_keeps_the_last_20_runs(tmp_path, env):
    store = OutputStore.for_workspace(tmp_path, env)
    runs = []
    for i in range(KEEP_RUNS + 5):
        runs.append(store.save(f"run {i}\n"))
        os.utime(store.root / f"{runs[-1]}.txt", ns=(i * 10**9, i * 10**9))
    store.prune()
    kept = sorted(p.stem for p in store.root.iterdir())
    assert kept == sorted(runs[5:])
    with pytest.raises(ToolError, match="no stored output for run"):
        store.read(runs[0])


def test_store_keeps_at_most_8_mib(tmp_path, env):
    store = OutputStore.for_workspace(tmp_path, env)
    chunk = ("z" * 1023 + "\n") * (3 * 1024)  # 3 MiB
    first, second, third = store.save(chunk), store.save(chunk), store.save(chunk)
    assert {p.stem for p in store.root.iterdir()} == {second, third}
    assert first not in (second, third)
    huge = store.save(("q" * 1023 + "\n") * (9 * 1024))  # one run over 8 MiB: its head is kept, and it says so
    text = store.read(huge)
    assert size(text) <= 8 * MiB and text.endswith(" more bytes were not stored: the store keeps 8 MiB]\n")
    assert {p.stem for p in store.root.iterdir()} == {huge}


def test_store_reads_no_link(tmp_path, env):
    store = OutputStore.for_workspace(tmp_path, env)
    store.save("x\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours\n")
    (store.root / "abcdefgh1234.txt").symlink_to(secret)
    with pytest.raises(ToolError, match="cannot read the stored output"):
        store.read("abcdefgh1234")


@pytest.mark.parametrize("bad", ["abc", "../../../etc/passwd", "a" * 65, "abc-defgh", 12345678, None])
def test_run_ids_are_validated(tmp_path, env, bad):
    with pytest.raises(ToolError, match="8 to 64 letters and digits"):
        OutputStore.for_workspace(tmp_path, env).read(bad)


def test_previous_lines_bounds(tmp_path, env):
    store = OutputStore.for_workspace(tmp_path, env)
    run = store.save("a\nb\nc\n")
    assert previous_lines(store, run) == "a\nb\nc\n"
    assert previous_lines(store, run, 2) == "b\nc\n"
    assert previous_lines(store, run, 2, 2) == "b\n"
    assert previous_lines(store, run, 3, 99) == "c\n"
    with pytest.raises(ToolError, match="has 3 lines; first_line 4 is past the end"):
        previous_lines(store, run, 4)
    with pytest.raises(ToolError, match="first_line must be 1 or more"):
        previous_lines(store, run, 0)
    with pytest.raises(ToolError, match=r"last_line \(1\) is before first_line \(2\)"):
        previous_lines(store, run, 2, 1)
    with pytest.raises(ToolError, match="must be a line number"):
        previous_lines(store, run, "2")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------- the command, end to end
@pytest.fixture
def cli(fixture_workspace: Path, user_config: Path, runtime_dir: Path):
    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(user_config.parent), "LANG": "C.UTF-8",
                   "PYTHONPATH": str(RUNTIME), "CODEACT_CONFIG_DIR": str(user_config), "CODEACT_BACKEND": "monty",
                   "XDG_RUNTIME_DIR": str(runtime_dir), **(env or {})}
        return subprocess.run([sys.executable, "-m", "codeact", *args], cwd=fixture_workspace, env=environ,
                              capture_output=True, text=True, timeout=60)
    return run


BIG_PRINT = 'for i in range(2000):\n    print(f"line {i + 1:04d} " + "x" * 40)'  # 102,000 bytes


def test_cli_cuts_a_100_kb_print_and_previous_output_reads_it_back(cli):
    done = cli("run", "--code", BIG_PRINT)
    assert done.returncode == 0 and done.stderr == ""
    assert size(done.stdout) <= 16 * 1024
    match, shown, tail = cut_in(done.stdout)
    bytes_, lines, run, first = map(lambda g: int(g) if g.isdigit() else g, match.groups())
    assert shown == [f"line {i:04d} " + "x" * 40 for i in range(1, first)]
    assert tail == [f"line {i:04d} " + "x" * 40 for i in range(2001 - len(tail), 2001)] and tail
    assert (lines, bytes_) == (2000 - len(shown) - len(tail), 102_000 - 51 * (len(shown) + len(tail)))
    again = cli("run", "--code", f'print(previous_output(run="{run}", first_line=1500, last_line=1502), end="")')
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout == "".join(f"line {i:04d} " + "x" * 40 + "\n" for i in (1500, 1501, 1502))
    rest = cli("run", "--code", f'len(previous_output(run="{run}", first_line={first}, '
                                f'last_line={first + lines - 1}).splitlines())')
    assert rest.stdout == f"{lines}\n"


def test_cli_json_carries_the_cut(cli):
    done = cli("run", "--json", "--code", BIG_PRINT + "\n7")
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["ok"] is True and data["result"] == 7
    assert set(data["cut"]) == {"run", "bytes", "lines"} and data["cut"]["lines"] > 1500
    assert cut_in(data["stdout"])[0].group(3) == data["cut"]["run"]
    back = cli("run", "--code", f'previous_output(run="{data["cut"]["run"]}", first_line=2001)')
    assert back.stdout == '"7\\n"\n'  # the last value's line is stored too


def test_cli_cap_is_overridable_and_a_missing_run_is_a_clear_error(cli):
    done = cli("run", "--code", BIG_PRINT, env={"CODEACT_OUTPUT": "200000"})
    assert size(done.stdout) == 102_000 and "[cut:" not in done.stdout
    missing = cli("run", "--code", 'previous_output(run="abcdefgh1234")')
    assert missing.returncode == 1
    assert "no stored output for run 'abcdefgh1234' in this workspace" in missing.stderr


# ------------------------------------------------------------------------------------------------- every scope
def test_previous_output_is_always_offered():
    from codeact.core.config import Settings, enabled_builtins

    for scope in ("repo", "global", "plugin"):
        assert "previous_output" in enabled_builtins(Settings(tools=("view",), scope=scope), {}, {})
    assert "previous_output" not in enabled_builtins(Settings(), {}, {"CODEACT_DISABLE": "previous_output"})


SCOPE_ANSWERS = {"repo": {}, "global": {}, "plugin": {"plugin_owner": "Acme Tools", "marketplace_name": "acme"}}


@pytest.mark.parametrize("scope", ["repo", "global", "plugin"])
def test_every_scope_cuts_and_reads_back(scope, template_src, tmp_path, runtime_dir):
    """The runtime as each scope stamps it (its own settings.json), run on a repository: the cut and the read."""
    from copier import run_copy

    from codeact.layout import for_scope
    from tests.conftest import make_repo

    install = make_repo(tmp_path / "install")
    run_copy(str(template_src), install, data={"scope": scope, "enforcement": "exclusive", **SCOPE_ANSWERS[scope]},
             defaults=True, unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    stamped = install / for_scope(scope).codeact_dir / "runtime"
    assert json.loads((stamped.parent / "settings.json").read_text())["scope"] == scope
    workspace = install if scope == "repo" else make_repo(tmp_path / "work")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "PYTHONPATH": str(stamped), "CODEACT_BACKEND": "monty", "XDG_RUNTIME_DIR": str(runtime_dir),
           "CODEACT_CONFIG_DIR": str(tmp_path / "config")}

    def codeact(program: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "codeact", "run", "--code", program], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=60)

    done = codeact(BIG_PRINT)
    assert done.returncode == 0, done.stderr
    match, _head, _tail = cut_in(done.stdout)
    assert size(done.stdout) <= 16 * 1024
    back = codeact(f'print(previous_output(run="{match.group(3)}", first_line=2000), end="")')
    assert (back.returncode, back.stdout) == (0, "line 2000 " + "x" * 40 + "\n"), back.stderr


def test_the_stamped_instructions_teach_the_cut(stamp, tmp_path):
    """Where the model reads the tools (repo scope: the instructions, which the agent loads and does not repeat,
    43.7; plugin scope: the agent itself), the cut and ``previous_output`` are taught."""
    signature = "previous_output(run: str, first_line: int = 1, last_line: int | None = None) -> str"
    project = stamp(tmp_path / "p", tools=["view", "grep"])
    instructions = (project / ".github/instructions/codeact.instructions.md").read_text()
    agent = (project / ".github/agents/codeact.agent.md").read_text()
    assert f"- `{signature}`" in instructions and "16 KiB" in instructions and "64 KiB" not in instructions
    assert signature not in agent and "The CodeAct instructions (they load with this agent)" in agent


def test_previous_output_in_the_sandbox(run_program, fixture_workspace, runtime_dir):
    env = {"XDG_RUNTIME_DIR": str(runtime_dir)}
    run = OutputStore.for_workspace(fixture_workspace, env).save("a\nb\nc\n")
    done = run_program(f'previous_output(run="{run}", first_line=2)', env=env)
    assert done.ok and done.result == "b\nc\n"
    bad = run_program('previous_output(run="nope")', env=env)
    assert not bad.ok and bad.error.type == "RuntimeError" and "8 to 64 letters and digits" in bad.error.message
    elsewhere = run_program(f'previous_output(run="{run}")', env=env, workspace=fixture_workspace / "src")
    assert not elsewhere.ok and "no stored output for run" in elsewhere.error.message  # another workspace's store


def test_cli_keeps_8_mib_of_a_flood_and_says_what_it_dropped(cli, runtime_dir):
    done = cli("run", "--code", 'for i in range(9 * 1024):\n    print("y" * 1023)')  # 9 MiB
    assert done.returncode == 0 and size(done.stdout) <= 16 * 1024
    match, _head, shown_tail = cut_in(done.stdout)
    bytes_, lines, run, first = match.groups()
    (stored,) = runtime_dir.glob(f"codeact-{os.getuid()}/outputs/*/{run}.txt")
    assert stored.stat().st_size <= 8 * MiB
    kept = (8 * MiB - 64 * 1024) // 1024  # whole lines of 1,024 bytes the run keeps
    tail = cli("run", "--code", f'print(previous_output(run="{run}", first_line={kept}), end="")')
    assert tail.stdout == "y" * 1023 + "\n" + f"\n... [{9 * MiB - kept * 1024} more bytes printed were not kept " \
                                                  f"(at most {8 * MiB - 64 * 1024} are); print less]\n"
    assert int(lines) == kept + 2 - int(first) + 1 - len(shown_tail)
    assert shown_tail[-1].startswith("... [") and shown_tail[-1].endswith("print less]")  # the end of the output


def test_the_last_value_is_converted_once_per_object_with_the_depth_checked_where_met() -> None:
    """Round 14: the last value was rebuilt item by item (``[[a] * 1000] * 1000``: 10**9 items in the host). Each
    container is converted once now and shared again; the depth bound holds wherever a shared one is met."""
    import pytest

    from codeact.backends.monty import VALUE_DEPTH, _as_python
    from codeact.errors import ProgramError

    a = [0] * 1000
    c = [[a] * 1000] * 1000
    out = _as_python(c)
    assert out == c and out[0] is out[1] and out[0][0] is out[5][7]
    deep: list = [1]
    for _ in range(VALUE_DEPTH - 20):
        deep = [deep]
    assert _as_python([deep, deep])[1][0] is not None  # shallow enough where met
    wrapped: list = deep
    for _ in range(30):
        wrapped = [wrapped]
    with pytest.raises(ProgramError, match="nested more than"):
        _as_python([deep, wrapped])  # the same list, met 30 levels deeper the second time
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(ProgramError, match="nested more than"):
        _as_python(loop)


def test_an_int_past_the_decimal_digits_limit_is_written_as_its_hex() -> None:
    """Round 20: 10**5000 has more digits than CPython writes in decimal (json.dumps and repr both raise): the
    value is written as its exact hex literal, alone or inside a container, never a host traceback."""
    from codeact.core.limits import within
    from codeact.core.outputs import jsonable, value_line

    big = 10 ** 5000
    for value, start in ((big, "0x"), ([big, 1], "[0x"), ({"n": big}, "{'n': 0x"), ((big,), "(0x")):
        text, whole, is_json = within(value, 1 << 20)
        assert text.startswith(start) and whole and not is_json, text[:40]
        assert int(text[len(start) - 2:].split(",")[0].rstrip("})]"), 16) == big
        assert value_line(value).startswith(start) and isinstance(jsonable(value), str)
    text, whole, _ = within([big] * 100, 1000)
    assert not whole and len(text) <= 1000
