"""Red team, round 4: attacks on this round's boundary code (the programs' own file idioms served on the host,
the sql tool's fences). Each test is one attempt that broke through; a test still marked ``xfail(strict=True)``
is a break whose fix lies in code its owner is still changing (the lead drops the mark with the fix)."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.core.boundary import Workspace
from codeact.core.tool import ToolContext
from codeact.errors import PolicyError
from codeact.tools import sql as sql_mod
from tests.runtime.launchers import Launcher

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links, FIFOs and the warm server: POSIX")

# fts3_tokenizer('name', ptr) registers a tokenizer whose C function table lies at ptr; a table using it makes
# SQLite call through that table: a crash of the host (code execution with a crafted address)
SET_POINTER = "SELECT fts3_tokenizer('evil', x'4141414141414141')"
USE_IT = "CREATE VIRTUAL TABLE v USING fts3(x, tokenize=evil); INSERT INTO v VALUES ('a')"


def _sql_in_child(workspace: Path, query: str, db: str = ":memory:") -> subprocess.CompletedProcess[str]:
    """The sql tool called in a child process: a host crash (the break) must not take pytest with it."""
    script = (f"import sys; sys.path.insert(0, {str(RUNTIME)!r})\n"
              "from pathlib import Path\n"
              "from codeact.core.limits import Limits\nfrom codeact.core.boundary import Workspace\n"
              "from codeact.core.tool import ToolContext\nfrom codeact.tools import sql\n"
              f"ctx = ToolContext(Workspace.at(Path({str(workspace)!r})), Limits())\n"
              "try:\n"
              f"    print('RAN', sql.sql(ctx, query={query!r}, db={db!r}))\n"
              "except Exception as exc:\n"
              "    print('REFUSED', type(exc).__name__, exc)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------------------------------- sql: host memory
def test_sql_refuses_fts3_tokenizer_which_reads_and_sets_native_pointers(ctx: ToolContext) -> None:
    with pytest.raises(PolicyError, match="fts3_tokenizer"):
        sql_mod.sql(ctx, query="SELECT fts3_tokenizer('simple')")  # one argument: the address leaks
    done = _sql_in_child(ctx.workspace.root, f"{SET_POINTER}; {USE_IT}")
    assert done.returncode == 0, f"the host crashed (rc {done.returncode}): {done.stderr[-500:]}"
    assert "REFUSED PolicyError" in done.stdout and "fts3_tokenizer" in done.stdout, done.stdout


@pytest.mark.parametrize("schema", [
    "CREATE TABLE t(a CHECK (fts3_tokenizer('evil', x'4141414141414141') IS NOT NULL))",
    "CREATE TABLE t(a); CREATE TABLE log(x); "
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (fts3_tokenizer('evil', x'4141414141414141')); END",
], ids=["check-constraint", "trigger"])
def test_a_hostile_database_cannot_reach_fts3_tokenizer_through_its_schema(fixture_workspace: Path,
                                                                          schema: str) -> None:
    """The authorizer never sees a function a CHECK constraint calls: a database file of the repository whose
    schema calls fts3_tokenizer crashed the host on an ordinary INSERT."""
    conn = sqlite3.connect(fixture_workspace / "data.db")
    conn.executescript(schema)
    conn.close()
    done = _sql_in_child(fixture_workspace, f"INSERT INTO t VALUES (1); {USE_IT}", db="data.db")
    assert done.returncode == 0, f"the host crashed (rc {done.returncode}): {done.stderr[-500:]}"
    assert "REFUSED" in done.stdout and "fts3_tokenizer" in done.stdout, done.stdout


def test_ordinary_fts_still_works(ctx: ToolContext) -> None:
    rows = sql_mod.sql(ctx, query="CREATE VIRTUAL TABLE d USING fts4(body); INSERT INTO d VALUES ('hello world');"
                                  "SELECT count(*) AS n FROM d WHERE d MATCH 'hello'")
    assert rows == [{"n": 1}]


# ------------------------------------------------------------------------------- through the stamped launcher
@pytest.fixture
def launcher(make_launcher: Callable[..., Launcher]) -> Launcher:
    """A stamped repository with no bash (exclusive mode) and its launcher."""
    return make_launcher(["view", "create", "edit", "glob", "grep", "outline", "sql"])


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_sql_fts3_tokenizer_does_not_crash_the_host_through_the_launcher(launcher: Launcher, warm: bool) -> None:
    code = f'print(sql(query="{SET_POINTER}; {USE_IT}"))'
    done = launcher.run(code, warm=warm)
    assert done.returncode in (1, 2) and "fts3_tokenizer" in done.stderr, (done.returncode, done.stderr)
    assert "server stopped" not in done.stderr
    again = launcher.run("print(sql(query='SELECT 41 + 1 AS n'))", warm=warm)
    assert again.returncode == 0 and "42" in again.stdout, again.stderr


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_os_walk_following_links_over_a_link_loop_is_never_silently_empty(launcher: Launcher, warm: bool) -> None:
    (launcher.root / "loops").mkdir()
    (launcher.root / "loops/a").symlink_to("..", target_is_directory=True)  # a repository may commit this
    done = launcher.run("import os\nprint(sum(1 for _ in os.walk('.', followlinks=True)))", warm=warm)
    # CPython walks down to the kernel's 40-link limit and yields every folder on the way; an answer of 0
    # with exit 0 and no note is the one thing that must not happen
    assert done.returncode != 0 or "note:" in done.stderr or int(done.stdout.split()[-1]) > 1, (done.stdout,
                                                                                              done.stderr)


def test_open_with_newline_empty_keeps_crlf(launcher: Launcher) -> None:
    (launcher.root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    done = launcher.run("print(repr(open('crlf.txt', newline='').read()))", warm=False)
    assert done.returncode != 0 or done.stdout.strip() == repr("a\r\nb\r\n"), done.stdout


def test_reading_a_line_of_a_file_larger_than_the_memory_limit(launcher: Launcher) -> None:
    big = launcher.root / "big.log"
    with open(big, "wb") as handle:
        handle.write(b"first line\n")
        handle.truncate(300 << 20)  # sparse: 300 MiB, over the sandbox's 256 MiB memory limit
    done = launcher.run("print(repr(open('big.log').readline()))", warm=False)
    # CPython reads one line; a refusal is fine if it says why and names a tool (view with view_range, grep)
    assert (done.returncode == 0 and "'first line\\n'" in done.stdout) or (
        "request frame" not in done.stderr and ("view" in done.stderr or "grep" in done.stderr)), done.stderr


# ------------------------------------------------------------------------------------- names as macOS reads them
@pytest.mark.parametrize("target", [".git\u200c/config", ".github\ufeff/hooks/x.json", ".Git\u200d\u206a/hooks/x",
                                    ".mcp.json\u200e", ".codeact\u202a/bin/codeact",
                                    ".github/agents\u200f/x.agent.md"])
def test_names_hfs_plus_reads_as_protected_ones_are_refused(fixture_workspace: Path, target: str) -> None:
    """HFS+ ignores zero-width joiners, direction marks and U+FEFF in names (git's core.protectHFS guards its
    checkout against `.git\\u200c`): the write rules compared the bytes only."""
    with pytest.raises(PolicyError):
        Workspace.at(fixture_workspace).resolve_for_write(target)


def test_a_git_directory_spelt_with_ignored_code_points_is_refused(fixture_workspace: Path) -> None:
    ws = Workspace.at(fixture_workspace)
    for part in ("g/objects/x", "g/refs/x"):
        ws.resolve_for_write(part).parent.mkdir(parents=True, exist_ok=True)
    (fixture_workspace / "g/\u200cHEAD").write_text("ref: refs/heads/main\n")  # already there: HEAD on HFS+
    with pytest.raises(PolicyError, match="a git directory"):
        ws.resolve_for_write("g/config")
    ws.resolve_for_write("src/\u200cnotes.md")  # an ordinary name with such a code point stays writable


@pytest.mark.parametrize("target", [".github/hook\u017f/x.json", ".github/agent\u017f/x.agent.md", ".mcp.j\u017fon",
                                    ".github/copilot/\u017fettings.json", ".claude/\u017fettings.json",
                                    ".vscode/mcp.j\u017fon", "plugin\u017f/codeact/x"])
def test_names_a_unicode_case_fold_makes_protected_are_refused(fixture_workspace: Path, target: str) -> None:
    """`ſ` (U+017F) upper-cases to `S`: NTFS's upcase table and APFS's folding open `hookſ` as `hooks`, which
    str.lower() leaves as it is."""
    with pytest.raises(PolicyError):
        Workspace.at(fixture_workspace).resolve_for_write(target)


# ------------------------------------------------------------------------------------------------ uninstall
def test_uninstall_does_not_follow_a_link_in_the_folders_above_an_owned_entry(launcher: Launcher) -> None:
    """A pull request that turns `.github/skills` into a link to `../docs/skills` made `.github/skills/codeact/`
    the user's `docs/skills/codeact/`, and uninstall removed it (dry run and real run alike, with no warning)."""
    import shutil

    from tests.conftest import git

    root = launcher.root
    (root / "docs/skills/codeact").mkdir(parents=True)
    (root / "docs/skills/codeact/design.md").write_text("the user's notes\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "stamp and docs")
    shutil.rmtree(root / ".github/skills")
    (root / ".github/skills").symlink_to("../docs/skills", target_is_directory=True)
    uninstall = [str(root / ".codeact/bin/codeact"), "uninstall"]
    env = {**launcher.env, "CODEACT_SERVER": "0"}
    dry = subprocess.run([*uninstall, "--dry-run"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr
    assert "would remove .github/skills/codeact/" not in dry.stdout
    assert "left alone: .github/skills/codeact/ lies behind a link" in dry.stderr, dry.stderr
    done = subprocess.run(uninstall, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (root / "docs/skills/codeact/design.md").read_text() == "the user's notes\n"
    assert not (root / ".codeact").exists()  # the rest of the install went


# ------------------------------------------------------------------------------------ host modules, warm server
def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's RSS from /proc")
def test_patterns_sent_to_host_fnmatch_do_not_stay_in_the_warm_server(launcher: Launcher) -> None:
    code = ("import fnmatch\nbase = 'a' * 20_000\n"
            "for i in range(300):\n    fnmatch.fnmatch('x', base + '{tag}' + str(i))\nprint('done')")
    assert launcher.run("print(1)", warm=True).returncode == 0
    pid = launcher.server_pid()
    assert pid is not None
    before = _rss_kib(pid)
    for tag in ("a", "b"):
        done = launcher.run(code.format(tag=tag), warm=True, args=("--timeout", "120"), timeout=200)
        assert done.returncode == 0 and "done" in done.stdout, done.stderr
    assert launcher.server_pid() == pid
    grown = _rss_kib(pid) - before
    # 600 patterns of 20 KB: what a run holds may stay for the run; nothing should accumulate after it
    assert grown < 64 * 1024, f"the warm server kept {grown // 1024} MiB after two runs"


def test_a_long_look_around_pattern_gets_the_same_answer_warm_and_cold(launcher: Launcher) -> None:
    (launcher.root / "src").mkdir(exist_ok=True)
    (launcher.root / "src/w.txt").write_text("w7x\n")
    # under the 64 Ki characters a tool compiles (core.patterns), but 180 KB of UTF-8: past one argv string
    code = ('pat = "w7(?=x)|" + "\\u20ac" * 60000\n'
            'print(len(grep(pattern=pat, path="src")))')
    cold = launcher.run(code, warm=False)
    warm = launcher.run(code, warm=True)
    assert cold.returncode == 0 and cold.stdout.strip() == "1", cold.stderr
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout), warm.stderr
    longer = ('pat = "w7(?=x)|" + "|".join("q%d" % i for i in range(40000))\n'
              'print(len(grep(pattern=pat, path="src")))')
    cold, warm = launcher.run(longer, warm=False), launcher.run(longer, warm=True)
    assert cold.returncode == warm.returncode == 1 and "over the 65,536 a tool compiles" in cold.stderr == warm.stderr
