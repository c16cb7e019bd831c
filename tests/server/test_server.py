"""The warm server through the stamped launcher, as users run it: `.codeact/bin/codeact run` in a stamped git repo.

Every test runs real processes: the launcher, its thin client, the detached server, the Monty workers, bash and the
demo MCP server (tests/mcp/servers/demo_server.py). ``CODEACT_SERVER_IDLE`` keeps stray servers short-lived.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "mcp"))
from mcp_helpers import DEMO, starts  # noqa: E402

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the warm server needs Unix sockets (POSIX)")

STATUS_KEYS = {"running", "pid", "socket", "workspace", "config_hash", "started_at", "idle_timeout_s", "mcp_sessions",
               "providers", "active_runs", "responding", "stuck"}


class Repo:
    """A stamped repository with its launcher and an environment of its own (runtime folder, config, home)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env
        self.launcher = root / ".codeact" / "bin" / "codeact"

    def __call__(self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
                 cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.launcher), *args], cwd=cwd or self.root, env={**self.env, **(env or {})},
                              input=stdin, capture_output=True, text=True, timeout=timeout)

    def status(self, **kw: Any) -> dict[str, Any]:
        done = self("server", "status", "--json", **kw)
        assert done.returncode in (0, 1), done.stderr
        shown = json.loads(done.stdout)
        assert (done.returncode == 0) == shown["running"]
        return shown

    def server_pid(self, **kw: Any) -> int | None:
        shown = self.status(**kw)
        return shown["pid"] if shown["running"] else None


def short_dir() -> Path:
    """A folder with a short path: a socket path must fit in 104 bytes, and pytest's tmp_path is long."""
    return Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))


@pytest.fixture
def repo(stamp: Callable[..., Path], venv_dir: Path, tmp_path: Path) -> Any:
    root = stamp(tmp_path / "project")
    run_dir = short_dir()
    env = {k: v for k, v in os.environ.items() if k != "CODEACT_SERVER"}
    env.update(CODEACT_VENV=str(venv_dir), XDG_RUNTIME_DIR=str(run_dir), CODEACT_SERVER_IDLE="120",
               CODEACT_CONFIG_DIR=str(tmp_path / "config"), COPILOT_HOME=str(tmp_path / "copilot"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"))
    made = Repo(root, env)
    setup = made("setup", timeout=600)
    assert setup.returncode == 0, setup.stderr
    yield made
    made("server", "stop")
    shutil.rmtree(run_dir, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _wait_gone(pid: int, seconds: float = 15) -> bool:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_starts_on_demand_and_serves_the_next_runs(repo: Repo) -> None:
    before = repo("server", "status")
    assert before.returncode == 1 and "no server runs" in before.stderr
    assert repo.status()["running"] is False
    first = repo("run", "--code", "print(6 * 7)")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "42\n"
    shown = repo.status()
    assert set(shown) == STATUS_KEYS
    assert shown["running"] is True and shown["workspace"] == str(repo.root.resolve())
    assert shown["providers"] is None and shown["idle_timeout_s"] == 120
    pid = shown["pid"]
    again = repo("run", "--json", "--code", "x = 2\nx + 1")
    assert json.loads(again.stdout)["result"] == 3
    assert repo.server_pid() == pid, "the second run went to the same server"
    stopped = repo("server", "stop", "--json")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["running"] is False
    assert _wait_gone(pid)
    assert repo("server", "stop").returncode == 0, "stop exits 0 when none runs"


def test_server_start_then_status(repo: Repo) -> None:
    started = repo("server", "start", "--json")
    assert started.returncode == 0, started.stderr
    shown = json.loads(started.stdout)
    assert shown["running"] is True and shown["pid"]
    assert repo("server", "start").returncode == 0, "start is idempotent"
    assert repo.server_pid() == shown["pid"]


def test_the_fallback_runs_in_process_when_the_socket_folder_is_unusable(repo: Repo) -> None:
    blocked = short_dir()
    (blocked / "codeact").write_text("not a folder")  # where the server folder would be
    env = {"XDG_RUNTIME_DIR": str(blocked), "CODEACT_SERVER_DEBUG": "1"}
    done = repo("run", "--code", "print('here')", env=env)
    assert done.returncode == 0 and done.stdout == "here\n"
    assert "running in this process" in done.stderr and "not a private folder" in done.stderr
    assert repo.status(env=env)["running"] is False


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_the_fallback_runs_in_process_when_the_socket_folder_cannot_be_made(repo: Repo) -> None:
    locked = short_dir()
    locked.chmod(0o500)
    env = {"XDG_RUNTIME_DIR": str(locked), "CODEACT_SERVER_DEBUG": "1"}
    done = repo("run", "--code", "print('here')", env=env)
    assert done.returncode == 0 and done.stdout == "here\n"
    assert "cannot create the server folder" in done.stderr


def test_a_group_readable_socket_folder_is_refused(repo: Repo) -> None:
    shared = short_dir()
    (shared / "codeact").mkdir(mode=0o755)
    os.chmod(shared / "codeact", 0o755)
    env = {"XDG_RUNTIME_DIR": str(shared), "CODEACT_SERVER_DEBUG": "1"}
    done = repo("run", "--code", "print(1)", env=env)
    assert done.returncode == 0 and "not a private folder" in done.stderr
    assert not list((shared / "codeact").glob("*.sock")), "no server listens in a shared folder"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a socket owned by another user needs root")
def test_a_socket_owned_by_another_user_is_refused(repo: Repo) -> None:
    import socket as socketlib

    from codeact import client

    folder = client.private_folder(client.server_folder(repo.env))
    path = client.socket_path(folder, str(repo.root.resolve()),
                              install=str(repo.root.resolve() / ".codeact" / "runtime"))
    foreign = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    foreign.bind(path)
    foreign.listen(1)
    os.chown(path, 65534, 65534)
    try:
        done = repo("run", "--code", "print(1)", env={"CODEACT_SERVER_DEBUG": "1"})
        assert done.returncode == 0 and done.stdout == "1\n"
        assert "not a socket of this user" in done.stderr
    finally:
        foreign.close()
        os.unlink(path)


def test_parallel_runs_see_their_own_environment_and_folder(repo: Repo, tmp_path: Path) -> None:
    tools = tmp_path / "config" / "tools"
    tools.mkdir(parents=True)
    (tools / "marker.py").write_text(
        "def marker(ctx) -> str:\n    \"\"\"The run's MARKER variable.\"\"\"\n    return ctx.environ.get('MARKER', '')\n")
    (repo.root / "sub").mkdir()
    assert repo("run", "--code", "1").returncode == 0
    pid = repo.server_pid()
    program = "print(bash(command='echo $MARKER; pwd')['stdout'].split()); print(marker())"
    results: dict[str, subprocess.CompletedProcess[str]] = {}

    def one(value: str) -> None:
        results[value] = repo("run", "--code", f"import time\n{program}", env={"MARKER": value},
                              cwd=repo.root / "sub" if value.endswith("1") else None)

    threads = [threading.Thread(target=one, args=(f"m{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for value, done in results.items():
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith(f"['{value}'") and lines[1] == value
    assert repo.server_pid() == pid, "all four ran on the warm server"


def test_a_program_given_on_stdin_and_a_relative_file(repo: Repo) -> None:
    (repo.root / "sub").mkdir()
    (repo.root / "sub" / "prog.py").write_text("print('from file')\n")
    assert repo("run", "-", stdin="print('from stdin')\n").stdout == "from stdin\n"
    assert repo("run", "--file", "prog.py", cwd=repo.root / "sub").stdout == "from file\n"
    bad = repo("run", "--code", "1", "--timeout", "nope")
    assert bad.returncode == 2 and "invalid float value" in bad.stderr


def test_the_server_refuses_a_program_past_the_size_cap_before_parsing_it(repo: Repo) -> None:
    """What the thin client reads from stdin, and the server from --file, stops one character past MAX_PROGRAM:
    the warm server refuses the run, with the limit named, and goes on serving."""
    assert repo("run", "--code", "1").stdout == "1\n"
    pid = repo.server_pid()
    big = "x = 1\n" * 100_000
    (repo.root / "big.py").write_text(big)
    for done in (repo("run", "-", stdin=big), repo("run", "--file", "big.py")):
        assert done.returncode == 1 and "the program is too large: more than 256 KiB" in done.stderr, done.stderr
    assert repo("run", "--code", "2").stdout == "2\n"
    assert repo.server_pid() == pid, "the runs were the warm server's"


@pytest.mark.parametrize("change", ["settings", "mcp_json", "github_mcp_json", "copilot_mcp_config", "trusted_folders",
                                    "user_config", "user_tool", "variable", "lock", "runtime_file",
                                    "runtime_file_same_stat", "settings_same_stat"])
def test_a_new_server_after_each_input_of_the_hash_changes(repo: Repo, tmp_path: Path, change: str) -> None:
    assert repo("run", "--code", "1").returncode == 0
    old = repo.server_pid()
    assert old
    env: dict[str, str] = {}
    config = tmp_path / "config"
    if change == "settings":
        settings = repo.root / ".codeact" / "settings.json"
        data = json.loads(settings.read_text())
        data["tools"] = [*data["tools"], "web_fetch"]
        settings.write_text(json.dumps(data))
    elif change == "mcp_json":
        (repo.root / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    elif change == "github_mcp_json":
        (repo.root / ".github").mkdir(exist_ok=True)
        (repo.root / ".github" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    elif change == "copilot_mcp_config":
        (tmp_path / "copilot").mkdir(exist_ok=True)
        (tmp_path / "copilot" / "mcp-config.json").write_text(json.dumps({"mcpServers": {}}))
    elif change == "trusted_folders":
        (tmp_path / "copilot").mkdir(exist_ok=True)
        (tmp_path / "copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(repo.root)]}))
    elif change == "runtime_file":
        module = repo.root / ".codeact" / "runtime" / "codeact" / "core" / "hints.py"
        module.write_text(module.read_text() + "\n")
    elif change in ("runtime_file_same_stat", "settings_same_stat"):  # same size, the mtime put back: the server
        # checks stats, not contents, at every run; the change time still tells
        changed = (repo.root / ".codeact" / "runtime" / "codeact" / "core" / "hints.py" if change.startswith("runtime")
                   else repo.root / ".codeact" / "settings.json")
        before = changed.stat()
        text = changed.read_text()
        assert text.startswith(('"""', "{\n"))  # a docstring's first letter, or JSON's layout: same meaning
        changed.write_text(text[:3] + text[3].swapcase() + text[4:] if text.startswith('"""')
                           else text.replace("{\n", "{ ", 1))
        os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert changed.stat().st_size == before.st_size and changed.stat().st_mtime_ns == before.st_mtime_ns
    elif change == "user_config":
        config.mkdir(exist_ok=True)
        (config / "config.json").write_text(json.dumps({"disabled": ["sql"]}))
    elif change == "user_tool":
        (config / "tools").mkdir(parents=True, exist_ok=True)
        (config / "tools" / "hello.py").write_text("def hello() -> str:\n    return 'hi'\n")
    elif change == "variable":
        env["CODEACT_DISABLE"] = "sql"
    else:
        (repo.root / ".codeact" / "tools.lock.json").write_text(json.dumps({"version": 1, "servers": {}}))
    done = repo("run", "--code", "print(2)", env=env)
    assert done.returncode == 0 and done.stdout == "2\n", done.stderr
    new = repo.server_pid(env=env)
    assert new and new != old, "a fresh server serves the new configuration"
    assert _wait_gone(old), "the superseded server exits at once"


def test_it_exits_when_idle(repo: Repo) -> None:
    env = {"CODEACT_SERVER_IDLE": "1"}
    assert repo("run", "--code", "1", env=env).returncode == 0
    pid = repo.server_pid(env=env)
    assert pid and _wait_gone(pid, 20)
    assert repo.status(env=env)["running"] is False


def _worker_pids(server: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            name = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except OSError:
            continue
        if int(fields[1]) == server and "monty" in name:
            found.append(int(stat.parent.name))
    return found


def test_it_survives_a_program_whose_worker_crashes(repo: Repo) -> None:
    assert repo("run", "--code", "1").returncode == 0
    pid = repo.server_pid()
    assert pid
    killer: list[int] = []

    def kill_worker() -> None:
        time.sleep(1.0)
        for worker in _worker_pids(pid):
            os.kill(worker, signal.SIGKILL)
            killer.append(worker)

    thread = threading.Thread(target=kill_worker)
    thread.start()
    crashed = repo("run", "--code", "n = 0\nfor i in range(10**9):\n    n += i\nprint(n)", "--timeout", "20")
    thread.join()
    assert killer, "a Monty worker of the server was found and killed"
    assert crashed.returncode == 1
    assert repo.server_pid() == pid, "the server survived"
    after = repo("run", "--code", "print('still here')")
    assert after.returncode == 0 and after.stdout == "still here\n"


def test_a_run_whose_server_is_killed_fails_and_its_tools_ran_once(repo: Repo) -> None:
    assert repo("run", "--code", "1").returncode == 0
    pid = repo.server_pid()
    assert pid
    program = ("bash(command='echo once >> side.txt')\n"
               "n = 0\nfor i in range(10**9):\n    n += i\n")

    def kill_server() -> None:
        until = time.monotonic() + 20
        while time.monotonic() < until and not (repo.root / "side.txt").exists():
            time.sleep(0.02)
        time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=kill_server)
    thread.start()
    done = repo("run", "--code", program, "--timeout", "30")
    thread.join()
    assert done.returncode == 1
    assert "the CodeAct server stopped during this run; tools may already have run" in done.stderr
    assert (repo.root / "side.txt").read_text() == "once\n", "never retried"
    again = repo("run", "--code", "print('fresh')")
    assert again.returncode == 0 and again.stdout == "fresh\n"
    assert repo.server_pid() not in (None, pid)


def _with_demo_server(repo: Repo, tmp_path: Path) -> Path:
    counter = tmp_path / "starts.txt"
    (repo.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
        "type": "stdio", "command": sys.executable, "args": [DEMO], "env": {"DEMO_STARTS_FILE": str(counter)}}}}))
    found = repo("discover", timeout=120)
    assert found.returncode == 0, found.stderr
    counter.unlink(missing_ok=True)
    return counter


def test_an_mcp_server_starts_once_across_three_runs(repo: Repo, tmp_path: Path) -> None:
    counter = _with_demo_server(repo, tmp_path)
    for i in range(3):
        done = repo("run", "--code", f"print(demo.echo(text='call {i}'))")
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"call {i}\n"
    assert starts(counter) == 1
    sessions = repo.status()["mcp_sessions"]
    assert [s["server"] for s in sessions] == ["demo"] and all(isinstance(s["pid"], int) for s in sessions)


def test_runs_with_different_environments_get_their_own_mcp_session(repo: Repo, tmp_path: Path) -> None:
    counter = _with_demo_server(repo, tmp_path)
    outputs = {}
    for value in ("first", "second", "first"):
        done = repo("run", "--code", "print(demo.env(name='MARKER'))", env={"MARKER": value})
        assert done.returncode == 0, done.stderr
        outputs.setdefault(value, set()).add(done.stdout.strip())
    assert outputs == {"first": {"first"}, "second": {"second"}}
    # issue 44.2: each change of environment starts the server afresh in it, and the session it replaced is closed
    # once no run uses it: the server holds one session, not one per environment seen
    assert starts(counter) == 3
    deadline = time.monotonic() + 15
    while len(repo.status()["mcp_sessions"]) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [s["server"] for s in repo.status()["mcp_sessions"]] == ["demo"]
    done = repo("run", "--code", "print(demo.env(name='MARKER'))", env={"MARKER": "first", "OLDPWD": "/elsewhere"})
    assert (done.returncode, done.stdout.strip()) == (0, "first") and starts(counter) == 3  # a cd: no start


def test_a_host_tool_tripping_its_bound_fails_alone(repo: Repo, tmp_path: Path) -> None:
    counter = _with_demo_server(repo, tmp_path)
    assert repo("run", "--code", "print(demo.echo(text='warm'))").returncode == 0
    pid = repo.server_pid()
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    query = ("CREATE TABLE t(x); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 6000000) "
             "INSERT INTO t SELECT randomblob(100) FROM c; SELECT count(*) AS n FROM t")
    heavy = f"sql(query={query!r})"

    def big() -> None:
        results["big"] = repo("run", "--code", heavy, env={"CODEACT_MEMORY": str(64 * 1024 * 1024)})

    def mcp() -> None:
        results["mcp"] = repo("run", "--code", "print(demo.slow(seconds=0.5))")

    threads = [threading.Thread(target=big), threading.Thread(target=mcp)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["big"].returncode == 1
    assert "the query needs more than the 64 MiB memory limit" in results["big"].stdout + results["big"].stderr
    assert results["mcp"].returncode == 0, results["mcp"].stderr
    assert repo.server_pid() == pid, "the server survived the bound"
    assert starts(counter) == 1


def test_a_session_keeps_plain_data_globals_for_the_next_run(repo: Repo) -> None:
    first = repo("run", "--session", "work", "--code",
                 "x = 41\nrows = [(1, 2)]\nconfig = {'a': [True, None]}\ndef f():\n    return 1\n")
    assert first.returncode == 0, first.stderr
    second = repo("run", "--session", "work", "--code", "x += 1\nprint(x, rows, config)")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "42 [[1, 2]] {'a': [True, None]}\n"
    kept = list((Path(repo.env["XDG_STATE_HOME"]) / "codeact" / "sessions").glob("*/work.json"))
    assert len(kept) == 1 and set(json.loads(kept[0].read_text())) == {"x", "rows", "config"}, "plain data only"
    assert oct(kept[0].stat().st_mode & 0o777) == "0o600"
    third = repo("run", "--session", "work", "--code", "print(x)")
    assert third.stdout == "42\n", "the second run's change was kept"
    alone = repo("run", "--code", "print(x)")
    assert alone.returncode == 1 and "NameError" in alone.stdout + alone.stderr, "no --session: an empty start"
    other = repo("run", "--session", "other", "--code", "print(x)")
    assert other.returncode == 1, "sessions are kept apart"
    cold = repo("run", "--session", "work", "--code", "print(x)", env={"CODEACT_SERVER": "0"})
    assert cold.stdout == "42\n", "the same session without the server"
    bad = repo("run", "--session", "../up", "--code", "1")
    assert bad.returncode == 2 and "--session" in bad.stderr


@pytest.fixture
def providers_repo(repo: Repo) -> Any:
    repo.env["CODEACT_PROVIDERS"] = "1"
    started = repo("server", "start", "--json")
    assert started.returncode == 0, started.stderr
    shown = json.loads(started.stdout)
    assert set(shown["providers"]) >= {"url", "token_file"}
    assert shown["providers"]["url"].startswith("ws://127.0.0.1:")
    assert oct(os.stat(shown["providers"]["token_file"]).st_mode & 0o777) == "0o600"
    return repo, shown["providers"]


def test_a_live_provider_lends_tools_to_programs_through_the_server(providers_repo: Any) -> None:
    from codeact.providers.helper import Provider

    repo, endpoint = providers_repo
    token = Path(endpoint["token_file"]).read_text().strip()
    notes = Provider("notes", context="The user's notes, each a short text.")

    @notes.tool
    def count(word: str) -> int:
        """How many notes hold word."""
        return {"milk": 2}.get(word, 0)

    notes.start(endpoint["url"], token)
    try:
        until = time.monotonic() + 10
        while time.monotonic() < until and "notes.count" not in repo("tools").stdout:
            time.sleep(0.1)
        listed = repo("tools")
        assert "notes.count" in listed.stdout and "[live]" in listed.stdout
        described = repo("describe", "notes")
        assert described.returncode == 0 and "The user's notes, each a short text." in described.stdout
        done = repo("run", "--code", "print(notes.count(word='milk') + 40)")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "42\n"
        wrong = repo("run", "--code", "notes.count(words='milk')")
        assert wrong.returncode == 1 and "words" in wrong.stdout + wrong.stderr, "type-checked from parameters"
        found = repo("search", "notes", "word", "--json")
        assert any(hit["name"] == "notes.count" and hit["source"] == "live" for hit in json.loads(found.stdout))
    finally:
        notes.stop()
    until = time.monotonic() + 10
    while time.monotonic() < until and "notes.count" in repo("tools").stdout:
        time.sleep(0.1)
    gone = repo("run", "--code", "notes.count(word='milk')")
    assert gone.returncode == 1 and "notes" in gone.stdout + gone.stderr


def test_clients_that_close_once_answered_keep_the_same_server(repo: Repo) -> None:
    """The server abandons a run whose client went away; a client that read its answer and closed before the run's
    thread took it off the list looked the same, and the server retired after ordinary runs (seen in a benchmark)."""
    assert repo("run", "--code", "1").returncode == 0
    pid = repo.server_pid()
    for _ in range(25):
        done = repo("run", "--code", "print(2)")
        assert done.returncode == 0 and done.stdout == "2\n", done.stderr
    assert repo.server_pid() == pid, "the server retired after runs whose clients had their answers"


def test_the_idle_timer_waits_while_a_provider_is_connected(repo: Repo) -> None:
    from codeact.providers.helper import Provider

    repo.env.update(CODEACT_PROVIDERS="1", CODEACT_SERVER_IDLE="1")
    shown = json.loads(repo("server", "start", "--json").stdout)
    token = Path(shown["providers"]["token_file"]).read_text().strip()
    helper = Provider("keeper")

    @helper.tool
    def ping() -> str:
        """pong"""
        return "pong"

    helper.start(shown["providers"]["url"], token)
    try:
        time.sleep(3.5)
        assert _alive(shown["pid"]), "a connected provider keeps the server up"
    finally:
        helper.stop()
    assert _wait_gone(shown["pid"], 20), "idle again once it left"


def test_parallel_runs_call_mcp_tools_at_the_same_time(repo: Repo) -> None:
    demo = {"type": "stdio", "command": sys.executable, "args": [DEMO]}
    (repo.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"one": demo, "two": demo}}))
    assert repo("discover", timeout=120).returncode == 0
    assert repo("run", "--code", "print(one.echo(text='a'), two.echo(text='b'))").returncode == 0
    results: list[subprocess.CompletedProcess[str]] = []
    started = time.monotonic()
    threads = [threading.Thread(target=lambda s=server: results.append(repo("run", "--code",
                                                                            f"print({s}.slow(seconds=2))")))
               for server in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    assert elapsed < 3.8, f"two 2 s calls on two servers took {elapsed:.1f} s: the runs waited for each other"


def test_an_mcp_server_that_exited_between_runs_is_started_again(repo: Repo, tmp_path: Path) -> None:
    counter = _with_demo_server(repo, tmp_path)
    assert repo("run", "--code", "print(demo.echo(text='one'))").stdout == "one\n"
    sessions = repo.status()["mcp_sessions"]
    assert len(sessions) == 1 and sessions[0]["pid"]
    os.kill(sessions[0]["pid"], signal.SIGKILL)
    time.sleep(0.3)
    done = repo("run", "--code", "print(demo.echo(text='two'))")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "two\n"
    assert starts(counter) == 2
