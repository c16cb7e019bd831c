"""Host-side tools obey the run's limits (issue 12.4): every call ends by the run's DEADLINE (the time left in the
run, not a fresh timeout per call) and holds bounded memory, measured on the real command line.

Each measured run is a ``python -m codeact run`` under ``RLIMIT_AS`` (set in the child), so that a regression fails
the test instead of the machine; the peak RSS of its whole process tree (the runtime, the Monty worker, ripgrep) is
sampled from /proc.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import codeact
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext, tool_from_function
from codeact.tools import search
from codeact.tools.search import results, ripgrep

RUNTIME = Path(codeact.__file__).resolve().parents[1]  # the runtime under test (its CLI runs in the child)
MiB = 1024 * 1024
ADDRESS_SPACE = 2048 * MiB  # RLIMIT_AS of every measured run
PEAK_RSS = 512 * MiB
MARGIN = 2.0  # seconds a run may end after its time limit

needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir() or os.name != "posix",
                                reason="measures the process tree through Linux /proc")
needs_rg = pytest.mark.skipif(search.rg_binary() is None, reason="ripgrep is not installed here")


# ------------------------------------------------------------------------------------------------ measuring
class Measured(NamedTuple):
    returncode: int
    data: dict  # the --json envelope
    stderr: str
    seconds: float
    peak_rss: int  # bytes, the whole process tree


def _children(pid: int) -> Iterator[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                kids = handle.read().split()
        except OSError:
            continue
        for kid in kids:
            yield int(kid)
            yield from _children(int(kid))


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_address_space() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def measured_run(code: str, workspace: Path, config: Path, *, timeout: float, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> Measured:
    """``codeact run --json --timeout T --code CODE`` in ``workspace``, measured."""
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(config.parent), "LANG": "C.UTF-8",
               "PYTHONPATH": str(RUNTIME), "CODEACT_CONFIG_DIR": str(config), "CODEACT_BACKEND": "monty",
               **(env or {})}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "codeact", "run", "--json", "--timeout", f"{timeout:g}", *args,
                             "--code", code], cwd=workspace, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_limit_address_space)
    streams: dict[str, bytes] = {}

    def drain() -> None:
        streams["out"], streams["err"] = proc.communicate()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    peak = 0
    while reader.is_alive():
        peak = max(peak, sum(_rss(pid) for pid in [proc.pid, *_children(proc.pid)]))
        reader.join(0.01)
        if time.monotonic() - started > timeout + 60:
            proc.kill()
    seconds = time.monotonic() - started
    out = streams.get("out", b"").decode("utf-8", "replace")
    try:
        data = json.loads(out)
    except ValueError:
        data = {"ok": False, "unparsed": out[-2000:]}
    return Measured(proc.returncode, data, streams.get("err", b"").decode("utf-8", "replace"), seconds, peak)


def assert_bounded(run: Measured, timeout: float) -> None:
    assert run.seconds < timeout + MARGIN, f"ran {run.seconds:.1f} s under a {timeout:g} s limit"
    assert run.peak_rss < PEAK_RSS, f"peak RSS of the process tree {run.peak_rss / MiB:.0f} MiB"


def minified_js(size: int, seed: int = 1) -> str:
    """One line of ``size`` characters that looks like minified JavaScript."""
    rng = random.Random(seed)
    words = ["function", "var", "return", "if", "else", "for", "this", "null", "true", "a", "b", "e", "t", "n"]
    marks = ["(", ")", "{", "}", ";", ",", "=", "+", ".", " "]
    out, length = [], 0
    while length < size:
        word = rng.choice(words) + rng.choice(marks)
        out.append(word)
        length += len(word)
    return "".join(out)[:size]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "userconfig"
    folder.mkdir()
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# demo\n")
    return root.resolve()


# -------------------------------------------------------------------------------------- grep: bounded memory
@needs_proc
@needs_rg
def test_grep_dot_on_a_3_mb_one_line_file_is_bounded(workspace, config):
    line = minified_js(3_000_000)
    (workspace / "app.min.js").write_text(line + "\n")
    run = measured_run('r = grep(pattern=".", glob="*.js")\n[len(r), r[0]["line"], r[0]["text"]]', workspace,
                       config, timeout=5)
    assert run.data["ok"], (run.data, run.stderr)
    assert run.data["result"] == [1, 1, f"{line[:2000]} ... [line cut: {len(line) - 2000} more characters]"]
    assert_bounded(run, 5)


@needs_proc
def test_python_search_of_a_3_mb_one_line_file_is_bounded(workspace, config):
    # a look-ahead: ripgrep (without PCRE2) cannot run it, so the Python search reads the file, in chunks
    line = minified_js(3_000_000, seed=2)
    (workspace / "app.min.js").write_text(line + "\n")
    run = measured_run('r = grep(pattern="(?=function)", glob="*.js")\n[len(r), r[0]["text"]]', workspace,
                       config, timeout=5)
    assert run.data["ok"], (run.data, run.stderr)
    assert run.data["result"] == [1, f"{line[:2000]} ... [line cut: {len(line) - 2000} more characters]"]
    assert_bounded(run, 5)


@needs_proc
@needs_rg
def test_huge_match_counts_keep_only_what_can_be_returned(workspace, config):
    lines = 400_000
    (workspace / "many.txt").write_text("".join(f"match {i:06d} padding padding\n" for i in range(lines)))
    run = measured_run('r = grep(pattern="match", max_results=1000000)\nprint(len(r))\n[r[0], r[-1]["line"]]',
                       workspace, config, timeout=10)
    assert run.data["ok"], (run.data, run.stderr)
    # the oracle: the runner keeps items while their JSON (plus 2 each) fits the 1 MiB result limit
    kept, total = 0, 0
    for n in range(1, lines + 1):
        total += len(json.dumps({"path": "many.txt", "line": n, "text": f"match {n - 1:06d} padding padding"})) + 2
        if total > Limits().tool_result:
            break
        kept += 1
    assert run.data["result"] == [{"path": "many.txt", "line": 1, "text": "match 000000 padding padding"}, kept]
    assert run.data["stdout"] == f"{kept}\n"
    assert run.data["notes"] == [f"grep(): returned {kept:,} of {lines:,} matching lines, the first in path order "
                                 f"(the rest pass the {Limits().tool_result:,}-byte tool-result limit; narrow "
                                 "pattern, glob= or path= (one folder at a time))"]
    assert_bounded(run, 10)


def test_first_items_keeps_the_prefix_the_runner_would_return():
    from codeact.runner import _cap_result
    rng = random.Random(5)
    for _ in range(200):
        items = rng.sample(range(10_000), rng.randint(0, 300))
        count, budget = rng.choice([1, 7, 50, 10_000]), rng.choice([40, 300, 5000])
        kept = results.FirstItems(count, budget, lambda i: len(json.dumps(str(i))) + 2)
        for item in items:
            kept.add(item)
        got, dropped = kept.result()
        expected, expected_dropped = _cap_result([str(i) for i in sorted(items)[:count]], budget)
        assert ([str(i) for i in got], dropped) == (expected, expected_dropped)


def test_grep_hit_sizes_are_what_the_runner_counts():
    """grep sizes its hits in a few C-speed passes: exactly each hit's JSON (non-ASCII as itself, as
    ``within`` encodes it) plus 2, as the runner counts them."""
    rng = random.Random(7)
    alphabet = ["a", "é", "\"", "\\", "\t", "\x01", "\u2028", "\U0001f600", "/", " ", "\ufffd"]
    for _ in range(200):
        paths = ["".join(rng.choices(alphabet, k=rng.randint(1, 6))) for _ in range(rng.randint(1, 4))]
        hits = sorted((rng.choice(paths), rng.randint(1, 10**rng.randint(0, 7)),
                       "".join(rng.choices(alphabet, k=rng.randint(0, 20)))) for _ in range(rng.randint(1, 30)))
        sizes = [len(json.dumps({"path": p, "line": n, "text": t}, ensure_ascii=False)) + 2 for p, n, t in hits]
        assert results.hit_sizes(hits) == sizes
        assert results.hits_size(hits) == sum(sizes)


# ------------------------------------------------------------------------------------ the run's deadline
def test_a_tool_call_gets_the_time_left_in_the_run_not_a_fresh_timeout(run_program):
    from codeact.core.limits import Deadline

    seen = []

    def budget(ctx: ToolContext) -> float:
        """The seconds the run has left, as a tool sees them."""
        seen.append(ctx.run_deadline())
        return ctx.run_deadline().remaining()

    ctx = ToolContext(workspace=None, limits=Limits(timeout=30))  # type: ignore[arg-type]
    tool = tool_from_function(budget, source="user", bind=ctx, skip_first=True)
    result = run_program("a = budget()\nfor i in range(300000):\n    pass\n[a, budget()]",
                         limits=Limits(timeout=4), tools={"budget": tool})
    assert result.ok, result.error
    first, second = result.result
    assert 3.0 < first <= 4.0 and second < first  # the run's 4 s, shrinking; not the tool's own 30 s
    assert seen[0] is seen[1]
    assert Deadline.current() is None  # only while the run lasts
    outside = ctx.run_deadline()
    assert 29 < outside.remaining() <= 30 and outside is not ctx.run_deadline()  # outside a run: a fresh one per call


def test_a_slow_user_tool_is_stopped_at_the_deadline(run_program):
    def nap(seconds: float) -> str:
        """Sleep."""
        time.sleep(seconds)
        return "woke"

    started = time.monotonic()
    result = run_program("nap(seconds=8)", limits=Limits(timeout=1),
                         tools={"nap": tool_from_function(nap, source="user")})
    assert time.monotonic() - started < 1 + MARGIN
    assert not result.ok and result.error.type == "TimeoutError"
    assert result.error.message == ("nap() was stopped at the run's deadline while running the user tool (the 1 s "
                                    "time limit of the whole run); narrow the call, or raise the limit with --timeout")


def test_sql_stops_at_the_runs_deadline_not_a_fresh_one_per_call(run_program):
    forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    code = f"try:\n    sql(query={forever!r})\nexcept TimeoutError as e:\n    print(e)\nsql(query={forever!r})"
    started = time.monotonic()
    result = run_program(code, limits=Limits(timeout=3))
    assert time.monotonic() - started < 3 + MARGIN
    assert not result.ok and result.error.type == "TimeoutError"
    assert result.stdout.startswith("sql() was stopped at the run's deadline while running the query (the 3 s")


def test_bash_stops_at_the_runs_deadline(run_program):
    started = time.monotonic()
    result = run_program('bash(command="sleep 2.5")\nbash(command="sleep 30", timeout=60)', limits=Limits(timeout=3))
    assert time.monotonic() - started < 3 + MARGIN
    assert not result.ok and result.error.type == "TimeoutError"
    assert result.error.message.startswith("bash() was stopped at the run's deadline while running 'sleep 30' (it "
                                           "and every process it started were killed)")
    own = run_program('bash(command="sleep 30", timeout=0.5)["exit_code"]', limits=Limits(timeout=20))
    assert own.ok and own.result == 124  # its own timeout, first: the documented exit code, not an error


@pytest.fixture
def slow_rg(tmp_path, monkeypatch):
    """A stand-in ripgrep that prints nothing for a minute (as a search of a huge tree would)."""
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setattr(ripgrep, "_rg_cache", str(fake))
    return fake


@pytest.mark.skipif(os.name != "posix", reason="a shell-script stand-in for ripgrep")
@pytest.mark.parametrize("call, doing", [('grep(pattern="TODO")', "searching with ripgrep"),
                                         ('glob(pattern="*.py")', "listing files")])
@pytest.mark.usefixtures("slow_rg")
def test_ripgrep_is_killed_at_the_deadline(run_program, call, doing):
    started = time.monotonic()
    result = run_program(call, limits=Limits(timeout=1))
    assert time.monotonic() - started < 1 + MARGIN
    assert not result.ok and result.error.type == "TimeoutError"
    tool = call.split("(")[0]
    assert result.error.message.startswith(f"{tool}() was stopped at the run's deadline while {doing} (the 1 s")


# A child that writes 4,000 small pieces as fast as it can, flushing each (as ripgrep writes file by file).
_WRITER = "import sys\nfor i in range(4000):\n    sys.stdout.write(f'{i:06d}\\n'); sys.stdout.flush()\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ widens a pipe on Linux only")
def test_a_streaming_child_is_read_whole_in_batches(tmp_path):
    from codeact.core.limits import Deadline
    from codeact.tools import proc

    def read(stream: bool) -> list[bytes]:
        child = proc.Child.start([sys.executable, "-S", "-c", _WRITER], tmp_path, Deadline(60), "grep", "testing",
                                 stream=stream)
        assert child is not None
        with child:
            chunks = list(child)
        assert child.returncode == 0
        return chunks

    expected = b"".join(f"{i:06d}\n".encode() for i in range(4000))
    batched, eager = read(True), read(False)
    assert b"".join(batched) == b"".join(eager) == expected  # nothing lost, nothing reordered
    assert max(map(len, batched)) <= proc.STREAM_PIPE
    assert len(batched) < 200 < len(eager) or len(eager) < 200, (len(batched), len(eager))  # woken far less often


def test_a_short_streaming_output_is_read_without_waiting(tmp_path, monkeypatch):
    from codeact.core.limits import Deadline
    from codeact.tools import proc

    waits: list[float] = []
    monkeypatch.setattr(proc.time, "sleep", waits.append)
    child = proc.Child.start([sys.executable, "-S", "-c", "print('one match')"], tmp_path, Deadline(60), "grep",
                             "testing", stream=True)
    assert child is not None
    with child:
        assert b"".join(child) == b"one match\n"
    assert waits == []  # a search with little output pays nothing for the batching


@pytest.mark.skipif(os.name != "posix", reason="a shell-script stand-in for ripgrep")
def test_a_streaming_child_is_still_killed_at_the_deadline(tmp_path):
    from codeact.core.limits import Deadline
    from codeact.errors import ToolTimeout
    from codeact.tools import proc

    started = time.monotonic()
    child = proc.Child.start(["/bin/sh", "-c", "while :; do echo x; sleep 0.01; done"], tmp_path, Deadline(1),
                             "grep", "searching with ripgrep", stream=True)
    assert child is not None
    with pytest.raises(ToolTimeout, match=r"grep\(\) was stopped at the run.s deadline while searching"), child:
        for _ in child:
            pass
    assert time.monotonic() - started < 1 + MARGIN


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="SIGALRM interrupts the regex")
def test_a_regex_that_backtracks_for_ever_is_stopped(run_program, fixture_workspace):
    (fixture_workspace / "bad.txt").write_text("a" * 40 + "b\n")
    started = time.monotonic()
    result = run_program('grep(pattern="(?=(a+)+$)", glob="*.txt")', limits=Limits(timeout=1))
    assert time.monotonic() - started < 1 + MARGIN
    assert not result.ok and result.error.type == "TimeoutError"
    assert result.error.message.startswith("grep() was stopped at the run's deadline while searching files")


# ---------------------------------------------------------------------------------------- sql memory, web
@needs_proc
def test_sql_cannot_take_the_hosts_memory(workspace, config):
    query = ("CREATE TABLE t(x); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 6000000) "
             "INSERT INTO t SELECT randomblob(100) FROM c; SELECT count(*) AS n FROM t")
    run = measured_run(f"sql(query={query!r})", workspace, config, timeout=20, env={"CODEACT_MEMORY": str(64 * MiB)})
    assert not run.data["ok"]
    assert run.data["error"]["message"] == ("SQL error: the query needs more than the 64 MiB memory limit "
                                            "(CODEACT_MEMORY raises it); add LIMIT or aggregate in SQL")
    assert_bounded(run, 20)


@pytest.mark.parametrize("db", ["t.db", ":memory:"])
def test_sql_temporary_tables_stay_within_the_run_write_limit(make_ctx, tmp_path: Path, db: str) -> None:
    """Red team round 6: ``PRAGMA max_page_count`` bounds the main database only, and ``CREATE TEMP TABLE`` went to
    SQLite's temporary file outside the workspace, unbounded. Temporary tables, indices and sorts are kept in memory
    now (``temp_store = MEMORY``), so the run's memory limit bounds them: 30 MB of temporary table is refused."""
    from codeact.core import notices
    from codeact.errors import PolicyError, ToolError
    from codeact.tools import sql as sql_mod

    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = make_ctx(ws, limits=Limits(writes=1 << 20, memory=16 << 20))
    query = ("CREATE TEMP TABLE x AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 30000) "
             "SELECT i, randomblob(1000) AS b FROM c; SELECT sum(length(b)) AS s FROM x")
    notes = notices.Notes()
    previous = notes.activate()
    try:
        with pytest.raises((ToolError, PolicyError)) as caught:
            rows = sql_mod.sql(ctx, query=query, db=db)
            pytest.fail(f"30 MB of temporary table under a 1 MiB write limit: {rows}")
    finally:
        notices.restore(previous)
    assert "16 MiB memory limit" in str(caught.value)
    assert any("16 MiB memory limit" in note for note in notes.items), notes.items


@pytest.mark.parametrize("db", ["t.db", ":memory:"])
def test_sql_sorts_and_small_temporary_tables_stay_in_memory(make_ctx, tmp_path: Path, db: str) -> None:
    """A small temporary table still works; a sort larger than the memory limit is refused instead of spilling to a
    temporary file outside the workspace (which nothing would bound)."""
    from codeact.errors import ToolError
    from codeact.tools import sql as sql_mod

    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = make_ctx(ws, limits=Limits(writes=1 << 20, memory=16 << 20))
    rows = sql_mod.sql(ctx, query="CREATE TEMP TABLE s(x); INSERT INTO s VALUES (1), (2); SELECT sum(x) AS n FROM s",
                       db=db)
    assert rows == [{"n": 3}]
    sort = ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT 30000) "
            "SELECT i FROM (SELECT i, randomblob(1000) AS b FROM c) ORDER BY b LIMIT -1 OFFSET 29999")
    with pytest.raises(ToolError, match="16 MiB memory limit"):
        sql_mod.sql(ctx, query=sort, db=db)
    assert list(ws.iterdir()) in ([], [ws / "t.db"])


class _Trickle(BaseHTTPRequestHandler):
    """A page that arrives a byte every 50 ms for a minute; ``/headers`` trickles its headers too."""

    def do_GET(self) -> None:
        try:
            if self.path == "/headers":
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(1200):
                    self.wfile.write(b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    time.sleep(0.05)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "1200")
            self.end_headers()
            for _ in range(1200):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def trickle():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@needs_proc
@pytest.mark.parametrize("route", ["/page", "/headers"])
def test_web_fetch_of_a_slow_page_ends_by_the_deadline(workspace, config, trickle, route):
    (config / "config.json").write_text(json.dumps({"allow_hosts": ["127.0.0.1"]}))
    run = measured_run(f'web_fetch(url="{trickle}{route}")', workspace, config, timeout=3,
                       env={"CODEACT_TOOLS": "web_fetch"})
    assert not run.data["ok"], run.data
    assert run.data["error"]["type"] == "TimeoutError"
    assert run.data["error"]["message"].startswith(f"web_fetch() was stopped at the run's deadline while fetching "
                                                   f"{trickle}{route} (the 3 s time limit of the whole run)")
    assert_bounded(run, 3)


# ------------------------------------------------------------------------- CodeAct's own files (issue 13.5)
USER_FILES = {"README.md": "# demo\n\nTODO: write the docs\n", "docs/guide.md": "# Guide\nFIXME later\n",
              "src/app.py": "import os\n\nprint(os.getcwd())\n", "src/util.py": "import sys\n"}


@pytest.fixture
def stamped(stamp) -> Path:
    """A repository stamped by the real Copier (the default answers, repo scope) over the user's own files."""
    return stamp(files=USER_FILES).resolve()


def _both(call):
    saved = ripgrep._rg_cache
    try:
        ripgrep._rg_cache = ripgrep._RG_UNSET
        with_rg = call()
        ripgrep._rg_cache = None
        return with_rg, call()
    finally:
        ripgrep._rg_cache = saved


def test_searches_of_the_whole_workspace_return_only_the_users_files(stamped):
    from codeact.core.boundary import Workspace
    from codeact.layout import is_owned, read_manifest

    manifest = read_manifest(stamped)
    assert manifest is not None and ".github/skills/codeact/" in manifest.owned  # the stamp did write them
    assert (stamped / ".github/skills/codeact/SKILL.md").is_file()
    ctx = ToolContext(workspace=Workspace.at(stamped), limits=Limits())
    seeded_md = sorted(p for p in manifest.seeded if p.endswith(".md"))  # "this file is yours": the user's
    for with_rg, with_python in [
        _both(lambda: search.glob(ctx, pattern="**/*.md")),
        _both(lambda: sorted({h["path"] for h in search.grep(ctx, pattern="TODO|FIXME|XXX")})),
        _both(lambda: sorted({h["path"] for h in search.grep(ctx, pattern="import os")})),
        _both(lambda: sorted({h["path"] for h in search.grep(ctx, pattern="codeact", glob="*.md")})),
    ]:
        assert with_rg == with_python
    assert search.glob(ctx, pattern="**/*.md") == sorted(["README.md", "docs/guide.md", *seeded_md])
    assert [h["path"] for h in search.grep(ctx, pattern="TODO|FIXME|XXX")] == ["README.md", "docs/guide.md"]
    assert [h["path"] for h in search.grep(ctx, pattern="import os")] == ["src/app.py"]
    everything = {h["path"] for h in search.grep(ctx, pattern="codeact|the", max_results=100000)}
    assert everything and not [p for p in everything if is_owned(p)]


def test_a_search_inside_codeacts_folders_finds_them(stamped):
    from codeact.core.boundary import Workspace

    ctx = ToolContext(workspace=Workspace.at(stamped), limits=Limits())
    skills = _both(lambda: search.glob(ctx, pattern="*.md", path=".github/skills"))
    assert skills[0] == skills[1]
    assert ".github/skills/codeact/SKILL.md" in skills[0]
    assert search.glob(ctx, pattern=".github/agents/*.md") == [".github/agents/codeact.agent.md"]
    hits = search.grep(ctx, pattern="codeact", path=".github/agents")
    assert hits and {h["path"] for h in hits} == {".github/agents/codeact.agent.md"}


def test_an_mcp_call_gets_the_time_left_in_the_run(tmp_path):
    from codeact import run
    from codeact.core.config import Settings
    from codeact.mcp.discovery import discover
    from tests.mcp.mcp_helpers import demo

    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo()}}))
    home = tmp_path / "home"
    home.mkdir()
    environ = {"HOME": str(home), "COPILOT_HOME": str(home / "none"), "PATH": os.environ.get("PATH", "")}
    report = discover(root, timeout=30, environ=environ)
    assert report.outcomes["demo"].status == "ok", report.outcomes
    code = 'demo.slow(seconds=0.1)\ndemo.slow(seconds=2.5)\ndemo.slow(seconds=30)'
    started = time.monotonic()
    result = run(code, workspace=root, settings=Settings(tools=("view",)), environ=environ, limits=Limits(timeout=4),
                 backend="monty")
    assert time.monotonic() - started < 4 + MARGIN  # a fresh 4 s for the last call would end past 7 s
    assert not result.ok and result.error.type == "TimeoutError", result.error
    assert result.error.message.startswith("demo.slow() was stopped at the run's deadline (the 4 s time limit")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the children's address-space bound is Linux's")
def test_ripgrep_past_the_run_memory_fails_with_a_clear_error(make_ctx, tmp_path: Path) -> None:
    """Red team round 9: ripgrep compiles a committed .gitignore's rules into one glob set, 30,000 rules taking
    about 560 MB, in a child that had no memory limit. It now maps at most the run's memory limit and a headroom
    (``RLIMIT_AS``): past it ripgrep aborts, and the search fails saying so, never with a partial answer."""
    from codeact.errors import ToolError

    if ripgrep.rg_binary() is None:
        pytest.skip("ripgrep is not installed")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    (ws / ".gitignore").write_text("".join(f"dir{i}/**/*.log\n" for i in range(30_000)))
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    ctx = make_ctx(ws, limits=Limits(memory=1 << 20))
    for call in (lambda: search.glob(ctx, pattern="*.py"), lambda: search.grep(ctx, pattern="x")):
        with pytest.raises(ToolError, match=r"rg was ended by SIGABRT, most likely as it needed more than the run's "
                                            r"memory limit of 1 MiB allows it.*raise CODEACT_MEMORY"):
            call()
    (ws / ".gitignore").write_text("".join(f"dir{i}/**/*.log\n" for i in range(100)))
    assert search.glob(ctx, pattern="*.py") == ["a.py"]  # an ordinary search fits the headroom alone
    assert search.grep(ctx, pattern="x") == [{"path": "a.py", "line": 1, "text": "x = 1"}]
