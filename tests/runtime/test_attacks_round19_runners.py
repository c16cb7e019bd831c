"""Red team, round 19 (report-only): runners that look upward for their project file (npm, pnpm, yarn, bun,
``node --run``, cargo, Maven's parent POM) and node fed its code by a here-document, a here-string or ``-e``. Each
test runs a program through the sandbox and fails while the finding is open; a false positive is a test that the
ordinary write succeeds. Where a real tool is on this machine, the test runs the hook's command with it and asserts
that it ran the planted text when the sandbox's write went through."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from attack_helpers import command_workspace, edit_output

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")



def _host_runs_planted(ws: Path, entry: dict[str, object], tool: str) -> bool | None:
    """Whether the hook ``entry`` run by the real bash in its ``cwd`` prints ``PLANTED`` (None: no ``tool``)."""
    if shutil.which(tool) is None:
        return None
    done = subprocess.run(["bash", "-c", str(entry["bash"])], cwd=ws / str(entry.get("cwd", ".")),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "CARGO_TARGET_DIR": str(ws.parent / "target")})
    return "PLANTED" in done.stdout + done.stderr


def _edit(tmp_path: Path, entry: dict[str, object], files: dict[str, str], target: str, old: str, new: str,
          tool: str) -> str:
    """The output of a program's edit of ``target`` (``old`` to ``new``) in :func:`_workspace`; where it goes
    through and ``tool`` is here, the hook must have run the planted text."""
    base, ws = command_workspace(tmp_path, entry, files)
    out = edit_output(ws, base, target, old, new)
    if out.split() != ["PermissionError"]:
        assert _host_runs_planted(ws, entry, tool) is not False, out
    return out


# ------------------------------------------------------------ 1: npm and the others look upward for package.json
_ROOT_SCRIPTS = json.dumps({"name": "x", "scripts": {"lint": "exit 0"}}) + "\n"
_UPWARD = {
    "npm run": {"bash": "npm run lint", "cwd": "web"},
    "npm run-script": {"bash": "npm run-script lint", "cwd": "web/src"},
    "pnpm": {"bash": "pnpm lint", "cwd": "web"},
    "yarn": {"bash": "yarn run lint", "cwd": "web"},
    "bun": {"bash": "bun run lint", "cwd": "web"},
    "node --run": {"bash": "node --run lint", "cwd": "web"},
}


@pytest.mark.parametrize("form", sorted(_UPWARD))
def test_package_json_above_the_cwd_is_protected(tmp_path: Path, form: str) -> None:
    """npm (and pnpm, yarn, bun, ``node --run``) run the script of the nearest ``package.json`` at or above the
    folder they run in: ``{"bash": "npm run lint", "cwd": "web"}`` with no ``web/package.json`` runs the root's
    ``lint``, yet only ``web/package.json`` was protected. npm 10 ran the planted script."""
    entry = _UPWARD[form]
    files = {"package.json": _ROOT_SCRIPTS, "web/src/app.js": "", "web/README.md": ""}
    tool = "" if form == "node --run" else str(entry["bash"]).split()[0]  # node 20 lacks --run: not run
    out = _edit(tmp_path, entry, files, "package.json", '"exit 0"', '"echo PLANTED"', tool)
    assert out.split() == ["PermissionError"]


def test_npm_run_lint_leaves_other_files_writable(tmp_path: Path) -> None:
    """The ordinary hook: ``npm run lint`` keeps the project's sources writable."""
    base, ws = command_workspace(tmp_path, {"bash": "npm run lint", "cwd": "web"},
                          {"package.json": _ROOT_SCRIPTS, "web/src/app.js": "exit 0\n"})
    assert edit_output(ws, base, "web/src/app.js").split()[:1] == ["edited"]


def test_npx_prettier_leaves_sources_writable(tmp_path: Path) -> None:
    """The ordinary hook: ``npx prettier --write "$FILE"`` keeps the sources writable."""
    base, ws = command_workspace(tmp_path, {"bash": 'npx prettier --write "$FILE"'},
                          {"package.json": _ROOT_SCRIPTS, "src/app.js": "exit 0\n"})
    assert edit_output(ws, base, "src/app.js").split()[:1] == ["edited"]


# ------------------------------------------------------------ 2: cargo looks upward for Cargo.toml
_CRATE = {"Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\n',
          "build.rs": "fn main() { }\n", "src/main.rs": "fn main() {}\n"}
_CARGO_TARGETS = {"build.rs": ("fn main() { }", 'fn main() { println!("cargo:warning=PLANTED"); }', "cargo"),
                  "Cargo.toml": ('edition = "2021"', 'edition = "2021"\nbuild = "b.rs"', "")}  # not run


@pytest.mark.parametrize("target", sorted(_CARGO_TARGETS))
def test_cargo_files_above_the_cwd_are_protected(tmp_path: Path, target: str) -> None:
    """cargo takes the nearest ``Cargo.toml`` at or above the folder it runs in: ``{"bash": "cargo build
    --offline", "cwd": "src"}`` builds the root package, running its ``build.rs``; only ``src/Cargo.toml`` and
    ``src/build.rs`` (and below) were protected. cargo 1.8x printed the planted warning."""
    old, new, tool = _CARGO_TARGETS[target]
    out = _edit(tmp_path, {"bash": "cargo build --offline", "cwd": "src"}, _CRATE, target, old, new, tool)
    assert out.split() == ["PermissionError"]


@pytest.mark.parametrize("command", ["cargo fmt", "cargo fmt --check", "cargo fmt --all -- --check"])
def test_cargo_fmt_leaves_cargo_toml_and_build_rs_writable(tmp_path: Path, command: str) -> None:
    """A false positive: ``cargo fmt`` runs no build script, so the package's ``Cargo.toml`` and ``build.rs``
    stay writable (its ``.cargo/config*`` and ``rust-toolchain*`` stay protected)."""
    base, ws = command_workspace(tmp_path, {"bash": command}, _CRATE)
    assert edit_output(ws, base, "Cargo.toml", 'edition = "2021"', 'edition = "2018"').split()[:1] == ["edited"]
    assert edit_output(ws, base, "build.rs", "fn main() { }", "fn main() {}").split()[:1] == ["edited"]
    (ws / ".cargo").mkdir()
    (ws / ".cargo/config.toml").write_text("exit 0\n")
    assert edit_output(ws, base, ".cargo/config.toml").split() == ["PermissionError"]


# ------------------------------------------------------------ 3: Maven's parent POM
_PARENT = '<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>p</artifactId>' \
          '<version>1</version><packaging>pom</packaging><modules><module>mod</module></modules></project>\n'
_CHILD = '<project><modelVersion>4.0.0</modelVersion><parent><groupId>g</groupId><artifactId>p</artifactId>' \
         '<version>1</version>{relative}</parent><artifactId>m</artifactId></project>\n'


def test_maven_parent_pom_above_is_protected(tmp_path: Path) -> None:
    """``{"bash": "mvn -o -q compile", "cwd": "mod"}`` where ``mod/pom.xml`` names a ``<parent>``: Maven reads
    ``../pom.xml`` (its plugins, their configuration), which was writable."""
    base, ws = command_workspace(tmp_path, {"bash": "mvn -o -q compile", "cwd": "mod"},
                          {"pom.xml": _PARENT, "mod/pom.xml": _CHILD.format(relative="")})
    assert edit_output(ws, base, "pom.xml", "<version>1</version>", "<version>2</version>").split() == \
        ["PermissionError"]


def test_maven_relative_path_parent_is_protected(tmp_path: Path) -> None:
    """A ``<relativePath>`` in a POM Maven reads names the parent's POM elsewhere: it is protected too."""
    base, ws = command_workspace(tmp_path, {"bash": "mvn -o -q compile", "cwd": "mod"},
                          {"parents/base/pom.xml": _PARENT,
                           "mod/pom.xml": _CHILD.format(relative="<relativePath>../parents/base</relativePath>")})
    assert edit_output(ws, base, "parents/base/pom.xml", "<version>1</version>", "<version>2</version>").split() \
        == ["PermissionError"]


# ------------------------------------------------------------ 4: node's code from a here-document or -e
_NODE_CODE = {
    "a here-document": "node <<'EOF'\nrequire(\"./tools/check\")\nEOF",
    "a here-document piped": "cat <<'EOF' | node\nrequire(\"./tools/check\")\nEOF",
    "a here-document, node -": "node - <<'EOF'\nrequire(\"./tools/check\")\nEOF",
    "a here-string": "node <<< 'require(\"./tools/check\")'",
    "-e": "node -e \"require('./tools/check')\"",
    "-p": "node -p \"require('./tools/check')\"",
    "--eval=": "node --eval=\"require('./tools/check.js')\"",
    "--print": "node --print \"require('../tools/check')\"",
}


@pytest.mark.parametrize("form", sorted(_NODE_CODE))
def test_what_node_code_requires_is_protected(tmp_path: Path, form: str) -> None:
    """node given its code by a here-document (``node <<'EOF'``, ``cat <<'EOF' | node``), a here-string or
    ``-e``/``-p`` runs the files that code requires: ``require("./tools/check")`` ran ``tools/check.js``, which
    was writable. node 20 ran the planted text."""
    entry: dict[str, object] = {"bash": _NODE_CODE[form]}
    if "../" in _NODE_CODE[form]:
        entry["cwd"] = "web"
    files = {"tools/check.js": "module.exports = 0;\n", "web/.keep": ""}
    out = _edit(tmp_path, entry, files, "tools/check.js", "module.exports = 0;", "console.log('PLANTED');", "node")
    assert out.split() == ["PermissionError"]


def test_node_script_leaves_other_files_writable(tmp_path: Path) -> None:
    """The ordinary hook: ``node scripts/guard.js`` protects the script, not the rest."""
    base, ws = command_workspace(tmp_path, {"bash": "node scripts/guard.js"},
                          {"scripts/guard.js": "exit 0\n", "src/app.js": "exit 0\n"})
    assert edit_output(ws, base, "scripts/guard.js").split() == ["PermissionError"]
    assert edit_output(ws, base, "src/app.js").split()[:1] == ["edited"]
