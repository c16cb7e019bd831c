"""Red team 3, round 5 (issue 40): each test is one attempt that broke through a round-5 fix, as the attacker ran
it (a helper that had not seen the code); each failed before its fix. (Its bash attempt — a command that ends its
supervisor and re-executes without the call's mark — is a documented limit: docs/security.md.)"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.core.limits import Limits
from codeact.core.tool import ToolContext
from codeact.tools import sql

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


_CONFIG_BOMB = "[s]\n" + "".join(f"a{i} = " + f"%(a{i + 1})s" * 4 + "\n" for i in range(9)) + "a9 = " + "x" * 1000 + "\n"


def test_configparser_interpolation_stays_within_the_runs_memory() -> None:
    """``codeact_host.configparse`` (the prelude's ``configparser`` stand-in) runs on the host in process when its
    bound is small: the bound is the text's size times 1024 where the text holds ``%(``, but nine levels of four
    references each expand 4**9 times (BasicInterpolation allows ten levels). A 1,280-character config made the warm
    server's peak RSS 35 MB -> 723 MB (run memory limit 256 MiB), then failed only when the answer (~350 MB) did
    not fit the reply frame. Here: the call must not grow this process past its memory limit (64 MiB)."""
    probe = (
        "import resource, sys\n"
        "from codeact.backends.host_modules import HostModules\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    HostModules(None, memory=64 << 20, timeout=60).call('codeact_host.configparse', (sys.argv[1],), {})\n"
        "except (MemoryError, TimeoutError, ValueError) as exc:\n"
        "    print('refused', type(exc).__name__)\n"
        "print('grew', (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, _CONFIG_BOMB], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(RUNTIME)})
    assert done.returncode == 0, done.stderr
    grew = int(done.stdout.split("grew ")[1])
    assert grew < 64 << 20, f"the host process grew {grew:,} bytes for a 64 MiB run ({done.stdout.strip()})"


def test_sql_writes_count_against_the_runs_write_limit(make_ctx: Callable[..., ToolContext],
                                                       fixture_workspace: Path) -> None:
    """CODEACT_WRITES bounds what create() and edit() write in one run, but ``sql`` on a workspace database writes
    without a charge: ``zeroblob`` rows filled a 200 MB database in about a second past the 128 MiB default, and
    5 MB with CODEACT_WRITES=1000 (launcher, warm server)."""
    ctx = make_ctx(fixture_workspace, limits=Limits(writes=100_000))
    query = ("CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<5) "
             "INSERT INTO t SELECT zeroblob(1000000) FROM c; SELECT count(*) AS n FROM t")
    try:
        sql.sql(ctx, query=query, db="big.db")
    except Exception:  # noqa: BLE001 - refused: what the fix may do
        pass
    size = (fixture_workspace / "big.db").stat().st_size if (fixture_workspace / "big.db").exists() else 0
    assert size <= 100_000 + 65_536, f"sql wrote {size:,} bytes in a run whose write limit is 100,000"


def _capturing_hub() -> tuple[str, list[str | None], Callable[[], None]]:
    """A WebSocket listener that records each peer's Authorization header: where an attacker would point a
    provider."""
    import threading

    from websockets.sync.server import serve

    got: list[str | None] = []

    def handler(connection: object) -> None:
        got.append(connection.request.headers.get("Authorization"))  # type: ignore[attr-defined]
        connection.close()  # type: ignore[attr-defined]

    server = serve(handler, "127.0.0.1", 0)
    port = server.socket.getsockname()[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"ws://127.0.0.1:{port}/", got, server.shutdown


def test_a_provider_never_trusts_a_status_file_others_could_write(tmp_path: Path) -> None:
    """``Provider.serve(state_dir=...)`` reads ``providers.json`` with no check of who owns the folder or the file
    (the server itself refuses a folder that is a link, not private, or another user's). A status file in a folder
    another local user can write (``/tmp/codeact-UID`` made by them first, or a world-writable folder) names any URL
    and any ``token_file``: the provider sent ``Bearer <content of any file it can read>`` to the attacker's
    listener."""
    import json
    import threading

    from codeact.providers.helper import Provider

    url, got, shutdown = _capturing_hub()
    secret = tmp_path / "victim-secret"
    secret.write_text("VICTIM-SECRET-1234567890\n")
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "providers.json").write_text(json.dumps({"url": url, "token_file": str(secret)}))
    folder.chmod(0o777)  # anyone could have written that status file
    provider = Provider("demo")
    provider.tool(lambda x: x, name="echo", description="echo")
    thread = threading.Thread(target=lambda: _quiet(lambda: provider.serve(state_dir=folder, reconnect=False)),
                              daemon=True)
    thread.start()
    thread.join(10)
    shutdown()
    assert not any(h and "VICTIM-SECRET" in h for h in got), f"the provider sent {got} to a listener a status file " \
                                                                "in a world-writable folder named"


def _quiet(call: Callable[[], object]) -> None:
    try:
        call()
    except Exception:  # noqa: BLE001 - a refusal is what the fix does
        pass


def test_a_provider_given_a_workspace_joins_no_other_workspaces_hub(tmp_path: Path) -> None:
    """With ``workspace=`` (``--workspace``) naming the repository whose server to join, the status file is picked
    by that server's socket name only when there are several; with one status file — another workspace's server,
    say a hostile clone the user has open — the provider joins that hub, and that workspace's programs call its
    tools."""
    from codeact.client import socket_path
    from codeact.providers.helper import ProviderRefused, _stem

    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    mine = tmp_path / "mine"
    mine.mkdir()
    other = os.path.basename(socket_path(str(folder), str(tmp_path / "hostile")))[:-len(".sock")]
    (folder / f"{other}.providers.json").write_text("{}")
    try:
        picked = _stem(folder, mine)
    except ProviderRefused:
        return
    assert picked != other, "a provider meant for one workspace picked another workspace's server"


def test_saving_a_session_encodes_within_one_budget_not_one_per_name(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``--session`` state over 8 MiB is sized name by name, each name's value encoded up to 8 MiB: 400 names bound to
    one shared list (20 MB as JSON, 20 kB in memory) made save() encode ~3.2 GB after the program ended. Warm
    server: "the run did not end 3.5 s after it began ... the server restarts"; CODEACT_SERVER=0: a faulthandler
    traceback from sessions.save instead of the run's answer (--timeout 2)."""
    from codeact.core import sessions

    encoded = [0]
    real = sessions.within

    def counting(value: object, budget: int) -> tuple[str, bool, object]:
        text, whole, rest = real(value, budget)
        encoded[0] += len(text)
        return text, whole, rest

    monkeypatch.setattr(sessions, "within", counting)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    big = ["x" * 1000] * 20000
    sessions.save(tmp_path, "bomb", {f"a{i}": big for i in range(400)})
    assert encoded[0] <= 4 * sessions.MAX_STATE_BYTES, f"save() encoded {encoded[0]:,} characters"


def test_statistics_on_big_integers_runs_in_the_bounded_child() -> None:
    """``statistics.pvariance`` of 300 integers of ~280k bits was estimated at one step an integer and ran in the
    server process past the run's deadline (the run was abandoned and the server restarted). A big integer now
    counts as its words, and exact arithmetic on them as their square: such a call goes to the child, killed at the
    deadline."""
    from codeact.backends.host_modules import IN_PROCESS_WORK, _work

    numbers = [(1 << 280_000) + i for i in range(300)]
    assert _work("statistics.pvariance", (numbers,), {})[1] > IN_PROCESS_WORK
    assert _work("statistics.mean", ([1, 2, 3],), {})[1] < IN_PROCESS_WORK  # small numbers stay in process


def test_a_host_module_answer_of_many_small_items_is_refused_unread() -> None:
    """Round 14: an answer of many small items takes the host ~12 times its pickle (objects, slots, monty forms);
    one past what the run's memory holds so is refused before it is read."""
    import pytest

    from codeact.backends.host_modules import HostModules

    modules = HostModules(None, memory=16 << 20, timeout=60)
    with pytest.raises(MemoryError, match="pickled"):
        modules.call("shlex.split", ("ab " * 1_200_000,), {})
    assert modules.call("shlex.split", ("ab cd",), {}) == ["ab", "cd"]
