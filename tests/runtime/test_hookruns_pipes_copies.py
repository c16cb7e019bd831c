"""hookruns' reading of what a pipe feeds (an allowlist of data readers), of scripts a hook runs from a folder it
copies or a file another of its commands writes, and of stdin however spelled: the breaches the red team's round
20 found past its own tests, and the ordinary hooks that must stay read (their scripts protected, the
repository's other files writable)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import edit_output, hooked_workspace

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")


def _edit(tmp_path: Path, command: str, target: str) -> str:
    """A program's edit of ``target`` (``exit 0``) in a repository whose hook runs the bash ``command``."""
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": command}])
    for name in ("parts/run.sh", "tools/a.txt", "scripts/policy.sh", "scripts/check.py", "scripts/x.js",
                 "src/app.ts", target):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("exit 0\n")
    return edit_output(ws, base, target)


_FEED = "find tools -name '*.txt' | xargs cat | "
_PIPE_RUNS_CODE = {  # each runs the text of tools/a.txt, which no word names
    "/proc/$BASHPID/fd/0": "bash /proc/$BASHPID/fd/0",
    "/DEV/stdin": "bash /DEV/stdin",
    "../ climbing to /dev/stdin": "bash ../../../../../../../dev/stdin",
    "node //dev/stdin": "node //dev/stdin",
    "pypy3": "pypy3",
    "python3-dbg": "python3-dbg",
    "busybox ash": "busybox ash",
    "script -q /dev/null": "script -q /dev/null",
    "unshare": "unshare -r sh",
    "an absolute wrapper": "/usr/bin/flock /tmp/l sh",
    "a path climbing out": "../../../../usr/bin/sh",
    "tee >(sh)": "tee >(sh) > /dev/null",
    "{ read; sh; }": "{ read -r x; sh; }",
    "while read; do sh": "while read -r l; do sh; done",
    "(read; sh)": "(read -r x; sh)",
    "if ...; then sh": "if true; then sh; fi",
    "sort --compress-program=sh": "sort --compress-program=sh -S 1",
    "npx zx": "npx --yes zx",
    "bun run -": "bun run -",
    "bash -c 'jq . | sh'": "bash -c 'jq . | sh'",
    "${X:-/dev/stdin}": "bash ${X:-/dev/stdin}",
}


@pytest.mark.parametrize("form", sorted(_PIPE_RUNS_CODE))
def test_a_pipe_into_what_may_run_it_is_unread(tmp_path: Path, form: str) -> None:
    """A pipe's reader is data only where known to be (:data:`hookruns.names._STDIN_DATA`, an interpreter given
    a script file, a script of the repository by its path); any other name, wrapper, stdin spelled otherwise, or a
    command inside a compound one (or process substitution) the pipe feeds makes the hooks file Unread."""
    assert _edit(tmp_path, _FEED + _PIPE_RUNS_CODE[form], "tools/a.txt").split() == ["PermissionError"]


_PIPE_DATA = {
    "jq | grep -q": "jq -r '.toolName' | grep -q bash",
    "cat | ./scripts/policy.sh": "cat | ./scripts/policy.sh",
    "cat | python3 scripts/check.py": "cat | python3 scripts/check.py",
    "cat | node scripts/x.js": "cat | node scripts/x.js",
    "npx prettier --check . | tee": "npx prettier --check . | tee out.txt",
    "| npm run": "jq -c . | npm run --silent policy",
    "| npx tsx script": "jq -c . | npx --yes tsx scripts/x.ts",
    "| while read; do echo": "jq -r .x | while read -r f; do echo \"$f\" >> .hook.log; done",
    "| (cd scripts && ./policy.sh)": "jq -c . | (cd scripts && ./policy.sh)",
    "| $CLAUDE_PROJECT_DIR/scripts": "jq -c . | \"$CLAUDE_PROJECT_DIR\"/scripts/policy.sh",
    "test -f then run": "test -f scripts/policy.sh && bash scripts/policy.sh",
    "eslint --fix . then run": "npx eslint --fix . && bash scripts/policy.sh",
    "a log beside": "mkdir -p .logs && jq -c . >> .logs/hook.log && bash scripts/policy.sh",
}


@pytest.mark.parametrize("form", sorted(_PIPE_DATA))
def test_an_ordinary_hook_leaves_the_repository_writable(tmp_path: Path, form: str) -> None:
    """Ordinary hooks (a data tool, a script or an interpreter given one reading the pipe; a script run after a
    check or a log) are read: ``src/app.ts`` stays writable."""
    assert "PermissionError" not in _edit(tmp_path, _PIPE_DATA[form], "src/app.ts")


@pytest.mark.parametrize("form", ["cp -r parts/. .", "rsync -a parts/ build/", "mv parts build",
                                  "cp -r $CLAUDE_PROJECT_DIR/parts/. build", "cd build && cp -r ../parts/. ."])
def test_a_folder_copied_then_run_protects_its_source(tmp_path: Path, form: str) -> None:
    """A copier's destination holding the script run: the sources and every file below them are protected, the
    repository's other files stay writable."""
    tail = "bash run.sh" if form.endswith("parts/. .") else "cd \"$CLAUDE_PROJECT_DIR\" && bash build/run.sh" \
        if form.startswith("cd ") else "bash build/run.sh"
    command = f"mkdir -p build && {form} && {tail}"
    assert _edit(tmp_path, command, "parts/run.sh").split() == ["PermissionError"]
    assert "PermissionError" not in _edit(tmp_path / "b", command, "src/app.ts")


@pytest.mark.parametrize("command", [
    "cp -r parts/. \"$OUT\" && bash build/run.sh", "cp -r /tmp/parts/. build/ && bash build/run.sh",
    "cat parts/run.sh | sponge build/run.sh; bash build/run.sh", "git diff --output=build/run.sh; bash build/run.sh",
    "python3 scripts/check.py -o build/run.sh && bash build/run.sh", "some-generator --out build && bash build/run.sh",
    "cd build && uniq ../parts/run.sh run.sh; cd .. && bash build/run.sh"])
def test_a_script_another_command_writes_is_unread(tmp_path: Path, command: str) -> None:
    """A script the hook runs that another of its commands names (or a folder above it), from sources not known
    here (a writer other than a copier, a destination or source not known): every write refused."""
    assert _edit(tmp_path, command, "src/app.ts").split() == ["PermissionError"]
