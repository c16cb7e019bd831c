"""Reading the MCP configuration the Copilot CLI reads: files, precedence, ${VAR}, problems, the config hash."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeact.errors import ConfigError
from codeact.mcp.config import load_servers, read_exclusions


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_precedence_workspace_file_over_user(tmp_path: Path, _isolated_home: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"a": {"command": "from-dot-mcp"}, "b": {"command": "ws-b"}}})
    write(_isolated_home / "mcp-config.json", {"mcpServers": {"b": {"command": "from-user"},
                                                              "c": {"type": "http", "url": "https://x.test/mcp"}}})
    loaded = load_servers(tmp_path)
    assert {n: (s.command or s.url, s.source, s.scope) for n, s in loaded.servers.items()} == {
        "a": ("from-dot-mcp", ".mcp.json", "workspace"),
        "b": ("ws-b", ".mcp.json", "workspace"),
        "c": ("https://x.test/mcp", "$COPILOT_HOME/mcp-config.json", "user"),
    }
    assert any(str(p).startswith("$COPILOT_HOME/mcp-config.json: mcpServers.b: also defined in .mcp.json")
               for p in loaded.problems)
    assert not loaded.errors
    assert loaded.files == [".mcp.json", "$COPILOT_HOME/mcp-config.json"]


# Copilot CLI 1.0.102, `copilot mcp list --json` (COPILOT_ALLOW_ALL=true): with .github/mcp.json defining `gh`, an
# existing .mcp.json -- with servers, `{}`, or malformed -- makes the CLI list no server of .github/mcp.json.
@pytest.mark.parametrize("dot_mcp", [{"mcpServers": {"a": {"command": "x"}}}, {}, "{not json"])
def test_dot_mcp_json_hides_github_mcp_json_as_in_the_cli(tmp_path: Path, dot_mcp: object) -> None:
    write(tmp_path / ".mcp.json", dot_mcp)
    write(tmp_path / ".github/mcp.json", {"mcpServers": {"gh": {"command": "y"}}})
    loaded = load_servers(tmp_path)
    assert "gh" not in loaded.servers
    assert ".github/mcp.json" not in loaded.files
    [ignored] = [p for p in loaded.problems if p.file == ".github/mcp.json"]
    assert ignored.severity == "warning" and "ignores it whenever .mcp.json exists" in ignored.message


def test_github_mcp_json_is_read_when_there_is_no_dot_mcp_json(tmp_path: Path) -> None:
    write(tmp_path / ".github/mcp.json", {"mcpServers": {"gh": {"command": "y"}}})
    loaded = load_servers(tmp_path)
    assert list(loaded.servers) == ["gh"] and loaded.servers["gh"].source == ".github/mcp.json"
    assert not loaded.problems


def test_whole_entry_wins_no_field_merging(tmp_path: Path, _isolated_home: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    write(_isolated_home / "mcp-config.json", {"mcpServers": {"a": {"command": "y", "args": ["--flag"],
                                                                    "env": {"K": "v"}}}})
    server = load_servers(tmp_path).servers["a"]
    assert (server.command, server.args, dict(server.env)) == ("x", (), {})


def test_transports_defaults_and_fields(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {
        "loc": {"type": "local", "command": "srv", "args": ["-v"], "cwd": "sub", "timeout": 1500,
                "tools": ["one", "two"]},
        "implicit": {"command": "srv"},
        "web": {"url": "https://example.test/mcp", "headers": {"X-A": "1"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }})
    servers = load_servers(tmp_path).servers
    assert {n: s.transport for n, s in servers.items()} == {"events": "sse", "implicit": "stdio", "loc": "stdio",
                                                            "web": "http"}
    loc = servers["loc"]
    assert loc.cwd == str(tmp_path / "sub") and loc.timeout == 1.5 and loc.tools == ("one", "two")
    assert servers["implicit"].tools == ("*",) and servers["implicit"].exposes("anything")
    assert loc.exposes("one") and not loc.exposes("three")


def test_bare_form_in_workspace_files(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"playwright": {"command": "npx", "args": ["@playwright/mcp"]}})
    loaded = load_servers(tmp_path)
    assert list(loaded.servers) == ["playwright"] and not loaded.problems


def test_var_expansion_in_env_headers_args_url(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {
        "s": {"command": "srv", "args": ["--token=${TOK}", "${MISSING}x"], "env": {"API": "Bearer ${TOK}"}},
        "h": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOK}"}},
    }})
    loaded = load_servers(tmp_path, {"TOK": "s3cret", "HOST": "api.test", "HOME": str(tmp_path)})
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert s.args == ("--token=s3cret", "${MISSING}x") and dict(s.env) == {"API": "Bearer s3cret"}
    assert h.url == "https://api.test/mcp" and dict(h.headers) == {"Authorization": "Bearer s3cret"}
    assert [str(p) for p in loaded.problems] == [
        ".mcp.json: mcpServers.s.args[1]: $MISSING is not set; left as written (the CLI does the same)"]
    assert loaded.problems[0].severity == "warning"
    assert "s3cret" not in repr(s) + repr(h)


def test_expansion_as_the_cli_does_it(tmp_path: Path) -> None:
    """What Copilot CLI 1.0.102 passed to a real server it started (its argv, cwd and environment recorded):
    ``$VAR``, ``${VAR}``, ``${VAR:-default}`` in command, args and env; undefined ones left as written; ``~`` only
    in cwd (``"command": "~/bin/srv"`` did not start; ``"~/x"`` in args arrived unchanged); relative cwd from the
    workspace."""
    home = tmp_path / "home"
    write(tmp_path / ".mcp.json", {"mcpServers": {
        "a": {"command": "${SRVDIR}/srv", "args": ["~/x", "x~", "$HOME", "${HOME}/q", "$UNDEF1", "${UNDEF2}",
                                                   "${FOO:-d}", "${UNDEF3:-dflt}", "$$FOO", "${FOO}x$FOO"],
              "env": {"XENV": "$FOO-${UNDEF4}-~"}, "cwd": "~"},
        "b": {"command": "$SRVDIR/srv", "cwd": "~/bin"},
        "c": {"command": "~/bin/srv", "cwd": "sub"},
    }})
    env = {"HOME": str(home), "FOO": "bar", "SRVDIR": "/opt/bin"}
    servers = load_servers(tmp_path, env).servers
    a, b, c = servers["a"], servers["b"], servers["c"]
    assert a.command == "/opt/bin/srv" and b.command == "/opt/bin/srv" and c.command == "~/bin/srv"
    assert a.args == ("~/x", "x~", str(home), f"{home}/q", "$UNDEF1", "${UNDEF2}", "bar", "dflt", "$bar",
                      "barxbar")
    assert dict(a.env) == {"XENV": "bar-${UNDEF4}-~"}
    assert (a.cwd, b.cwd, c.cwd) == (str(home), str(home / "bin"), str(tmp_path / "sub"))


def test_config_hash_is_secret_free_and_stable(tmp_path: Path) -> None:
    entry = {"command": "srv", "args": ["--x"], "env": {"TOKEN": "${TOK}", "PLAIN": "literal-secret"},
             "headers": {"Authorization": "Bearer abc"}}
    write(tmp_path / ".mcp.json", {"mcpServers": {"s": entry}})
    one = load_servers(tmp_path, {"TOK": "aaa"}).servers["s"].config_hash()
    two = load_servers(tmp_path, {"TOK": "bbb"}).servers["s"].config_hash()
    assert one == two and one.startswith("sha256:")
    write(tmp_path / ".mcp.json", {"mcpServers": {"s": {**entry, "env": {"TOKEN": "${TOK}", "PLAIN": "other"}}}})
    assert load_servers(tmp_path, {"TOK": "aaa"}).servers["s"].config_hash() == one  # values never count
    write(tmp_path / ".mcp.json", {"mcpServers": {"s": {**entry, "timeout": 5000, "tools": ["a"]}}})
    assert load_servers(tmp_path, {}).servers["s"].config_hash() == one  # neither do timeout and the filter
    for change in ({"args": ["--y"]}, {"env": {"OTHER": "1"}}, {"command": "srv2"}, {"cwd": "elsewhere"}):
        write(tmp_path / ".mcp.json", {"mcpServers": {"s": {**entry, **change}}})
        assert load_servers(tmp_path, {}).servers["s"].config_hash() != one, change


def test_invalid_json_is_reported_with_file_and_the_rest_works(tmp_path: Path, _isolated_home: Path) -> None:
    write(tmp_path / ".mcp.json", '{"mcpServers": {"a": {"command": "x"},}}')
    write(_isolated_home / "mcp-config.json", {"mcpServers": {"b": {"command": "y"}}})
    loaded = load_servers(tmp_path)
    assert list(loaded.servers) == ["b"]
    assert len(loaded.errors) == 1 and str(loaded.errors[0]).startswith(".mcp.json: invalid JSON at line 1")


@pytest.mark.parametrize("entry, key, message", [
    ({"type": "carrier-pigeon", "command": "x"}, "mcpServers.bad.type", "unknown type 'carrier-pigeon'"),
    ({"type": "stdio"}, "mcpServers.bad.command", "needs a non-empty \"command\""),
    ({"type": "http", "url": "ftp://x"}, "mcpServers.bad.url", "needs an http(s) \"url\""),
    ({"command": "x", "args": "--flag"}, "mcpServers.bad.args", "must be a list of strings"),
    ({"command": "x", "env": {"N": 1}}, "mcpServers.bad.env", "must be an object of string values"),
    ({"command": "x", "tools": "*"}, "mcpServers.bad.tools", "must be a list of strings"),
    ({"command": "x", "timeout": -1}, "mcpServers.bad.timeout", "positive number of milliseconds"),
    ({"args": []}, "mcpServers.bad", "needs \"command\""),
    ("not an object", "mcpServers.bad", "must be an object"),
])
def test_invalid_entries_reported_with_file_and_key(tmp_path: Path, entry: object, key: str, message: str) -> None:
    write(tmp_path / ".github/mcp.json", {"mcpServers": {"bad": entry, "good": {"command": "ok"}}})
    loaded = load_servers(tmp_path)
    assert list(loaded.servers) == ["good"]
    [problem] = loaded.errors
    assert (problem.file, problem.key) == (".github/mcp.json", key)
    assert message in problem.message


def test_invalid_entry_falls_back_to_lower_precedence_definition(tmp_path: Path, _isolated_home: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"a": {"type": "http"}}})
    write(_isolated_home / "mcp-config.json", {"mcpServers": {"a": {"command": "user-a"}}})
    loaded = load_servers(tmp_path)
    assert loaded.servers["a"].command == "user-a"
    assert [p.key for p in loaded.errors] == ["mcpServers.a.url"]


def test_vscode_format_is_named(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"servers": {"a": {"command": "x"}}})
    loaded = load_servers(tmp_path)
    assert not loaded.servers and "VS Code format" in str(loaded.errors[0])


def test_copilot_home_default_is_dot_copilot(tmp_path: Path) -> None:
    write(tmp_path / "home/.copilot/mcp-config.json", {"mcpServers": {"u": {"command": "x"}}})
    loaded = load_servers(tmp_path / "nowhere", {"HOME": str(tmp_path / "home")})
    assert list(loaded.servers) == ["u"] and loaded.servers["u"].scope == "user"


def test_exclusions_from_settings(tmp_path: Path) -> None:
    assert read_exclusions(tmp_path) == ()
    write(tmp_path / ".codeact/settings.json", {"backend": "auto", "mcp_exclude": ["a", "b"]})
    assert read_exclusions(tmp_path) == ("a", "b")
    write(tmp_path / ".codeact/settings.json", {"mcp_exclude": "a"})
    with pytest.raises(ConfigError, match="mcp_exclude must be a list"):
        read_exclusions(tmp_path)


def test_a_relative_cwd_of_a_user_server_resolves_against_the_repository(tmp_path: Path) -> None:
    """Issue 28.4: as the CLI, `"cwd": "sub"` in $COPILOT_HOME/mcp-config.json is <repo>/sub, not ~/sub."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    write(home / ".copilot" / "mcp-config.json", {"mcpServers": {"mine": {"command": "srv", "cwd": "sub"},
                                                                 "tilde": {"command": "srv", "cwd": "~/x"}}})
    servers = load_servers(repo, {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot")}).servers
    assert servers["mine"].cwd == str(repo / "sub") and servers["tilde"].cwd == str(home / "x")


# What Copilot CLI 1.0.102 did with these urls (`copilot mcp list --json`, FULL, HOST and PORT set): it checks the
# url as written, before expansion, and skips an invalid one ('Skipping invalid MCP server "b": url: Invalid url').
CLI_URLS = {"https://${HOST}/mcp": True, "http://127.0.0.1:${PORT}/mcp": False, "${FULL}": False,
            "${FULL}/x": False, "not a url": False, "http://127.0.0.1:9/${FOO}/mcp": True, "${UNDEFINED_X}/mcp": False}


@pytest.mark.parametrize("url,kept", list(CLI_URLS.items()))
def test_a_url_with_a_variable_is_checked_as_written_as_the_cli_does(url: str, kept: bool, tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"web": {"type": "http", "url": url}}})
    env = {"FULL": "http://127.0.0.1:9/mcp", "HOST": "localhost", "PORT": "9", "FOO": "x"}
    loaded = load_servers(tmp_path, env)
    assert ("web" in loaded.servers) is kept, loaded.problems
    if not kept:
        (problem,) = loaded.errors
        assert problem.key == "mcpServers.web.url" and (problem.message.startswith("Invalid url (the Copilot CLI "
                                                                                   "skips this server")
                                                        or "$" not in url), problem
    else:
        assert loaded.servers["web"].url == url.replace("${HOST}", "localhost").replace("${FOO}", "x")


def test_an_unset_variable_is_carried_to_the_run_that_starts_the_server(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"mcpServers": {"s": {"command": "srv", "args": ["${NOPE_1}"],
                                                        "env": {"K": "$NOPE_2"}}, "t": {"command": "srv"}}})
    servers = load_servers(tmp_path, {}).servers
    assert servers["s"].warnings == (
        ".mcp.json: mcpServers.s.args[0]: $NOPE_1 is not set; left as written (the CLI does the same)",
        ".mcp.json: mcpServers.s.env.K: $NOPE_2 is not set; left as written (the CLI does the same)")
    assert servers["t"].warnings == ()
