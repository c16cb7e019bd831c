"""The monty pool a cold run starts early (its worker boots while the run is prepared) and the warm-up session in
its background thread: a run that fails before its own checkout must not close the pool under that session, nor
let the process exit while the thread is inside monty — that aborted the process (SIGABRT, no JSON; issue 40.10)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"

PROBE = """
import json, sys
from codeact.backends import monty
from codeact.runner import run
from codeact.core.config import Settings
monty.start_early()
warming = monty._EARLY_WARMING
result = run("x = " + "not " * 5000 + "True", workspace=sys.argv[1], settings=Settings(tools=("view",), backend="monty"))
print(json.dumps({"alive": warming.is_alive(), "type": result.error and result.error.type}))
"""


def test_a_run_that_fails_before_its_checkout_ends_the_warm_up_first(fixture_workspace: Path,
                                                                     user_config: Path) -> None:
    from tests.runtime.conftest import base_environ

    pytest.importorskip("pydantic_monty")
    env = base_environ(user_config, CODEACT_SERVER="0", PYTHONPATH=str(RUNTIME))
    for attempt in range(3):
        done = subprocess.run([sys.executable, "-c", PROBE, str(fixture_workspace)], capture_output=True, text=True,
                              timeout=60, env=env)
        assert done.returncode == 0, (attempt, done.returncode, done.stderr[-2000:])
        shown = json.loads(done.stdout)
        # the host's parse refuses it in milliseconds; a fresh worker's first program takes longer than that
        assert shown == {"alive": False, "type": "SyntaxError"}, (attempt, shown)
