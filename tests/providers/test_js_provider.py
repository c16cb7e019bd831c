"""A JavaScript provider (node + npm ``ws``, as .ci/run installs it) lends tools to a program, then leaves."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from providers_helpers import TOKEN

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = Path(os.environ.get("CODEACT_NPM_DIR", REPO / ".ci-cache" / "npm")) / "node_modules"
PROVIDER = Path(__file__).with_name("js") / "provider.js"


@pytest.fixture
def js_provider(url):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (needed for the JavaScript provider)")
    if not (NODE_MODULES / "ws" / "package.json").is_file():
        pytest.skip(f"the npm package ws is not in {NODE_MODULES} (.ci/run installs it)")
    proc = subprocess.Popen([node, str(PROVIDER), url, TOKEN, "jsapp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "NODE_PATH": str(NODE_MODULES)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready jsapp"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_a_javascript_providers_tools_run_in_a_program_and_vanish_when_it_leaves(hub, js_provider, run_program):
    tools = hub.tools()
    assert sorted(tools) == ["jsapp.add", "jsapp.boom", "jsapp.shout"]
    assert tools["jsapp.add"].source == "live" and hub.context("jsapp") == "A JavaScript test provider."
    result = run_program("jsapp.shout(text='hi ' + str(jsapp.add(a=2, b=3)))", tools)
    assert result.ok, result.error
    assert result.result == "HI 5"
    failed = run_program("jsapp.boom()", tools)
    assert not failed.ok and "[E_THROWN]" in failed.error.message and "kaboom" in failed.error.message

    js_provider.stdin.close()  # the script closes its socket
    js_provider.wait(10)
    for _ in range(250):
        if not hub.tools():
            break
        time.sleep(0.02)
    assert hub.tools() == {} and hub.connected == 0
    gone = run_program("jsapp.add(a=1, b=1)", tools)
    assert not gone.ok and "live provider 'jsapp' is not connected" in gone.error.message
