"""Red team, round 22 (report-only): hook commands that hookruns misreads after f56ec8a, a06520e, c3b46d9 and
4ea66d8, so that a program's write reaches what the hook runs on the host, and ordinary hooks it refuses (false
positives). Each breach test runs a program through the sandbox and fails while the finding is open; where the real
tool is on this machine, the test runs the hook's command with it and asserts that it ran the planted text when the
sandbox's write went through. The last test holds ordinary hooks that make every write refused: it fails while
any of them is."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import proved_edit

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_PLANT = "echo PLAN''TED"  # prints PLANTED only where a shell runs it
_DATA = "find tools -name '*.txt' | xargs cat"  # tools/a.txt's text, a file named by no word
_SUBSCRIPT = "a[$(echo PLAN''TED >&2)]"  # run by bash wherever it evaluates the text as arithmetic or a name




# ------------------------------------------------------------ 1: a comment ending in a backslash
_COMMENT = {
    "pipe into sh after a comment": (f"# lint the tree \\\n{_DATA} | sh", "tools/a.txt"),
    "trailing comment, then a pipe": (f"true # done \\\n{_DATA} | sh", "tools/a.txt"),
    "trailing comment, then a script": ("echo start # \\\nbash tools/evil.sh", "tools/evil.sh"),
}


@pytest.mark.parametrize("form", sorted(_COMMENT))
def test_comment_ending_in_backslash_hides_the_next_line(tmp_path: Path, form: str) -> None:
    """``# lint the tree \\⏎find ... | xargs cat | sh``: _joined_lines removes every backslash-newline before
    _LineReader drops comments, so the comment swallows the next line; bash ends a comment at the newline
    whatever precedes it (a backslash in a comment is no continuation) and runs that line. The pipe into sh and
    the script run are never read: tools/a.txt, tools/evil.sh stay writable. bash 5.2 ran the planted text."""
    command, target = _COMMENT[form]
    files = {"tools/a.txt": "true\n", "tools/evil.sh": "true\n"}
    out = proved_edit(tmp_path, {"bash": command}, files, target, "true", _PLANT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 2: an unquoted substitution inside a script's path
_SUBSTITUTED_PATH = {
    "sh ./tools/$(echo evil).sh": ("sh ./tools/$(echo evil).sh", "tools/evil.sh", _PLANT, "true"),
    "source tools/$(echo evil).sh": ("source tools/$(echo evil).sh", "tools/evil.sh", _PLANT, "true"),
    "bash tools/$(cat tools/n).sh": ("bash tools/$(cat tools/n).sh", "tools/evil.sh", _PLANT, "true"),
    "python3 tools/$(echo evil).py": ("python3 tools/$(echo evil).py", "tools/evil.py", "print('PLAN' 'TED')",
                                      "True"),
}


@pytest.mark.parametrize("form", sorted(_SUBSTITUTED_PATH))
def test_unquoted_substitution_in_script_path(tmp_path: Path, form: str) -> None:
    """``sh ./tools/$(echo evil).sh``: quoted (``bash "tools/$(x).sh"``) the word is Unread, but unquoted shlex
    splits it at the parentheses (``./tools/$``, ``(``, ``echo``, ``evil``, ``)``, ``.sh``): the script word is
    ``./tools/$``, which names no file and is no substitution to _unknown (only a lone ``$`` is). bash runs
    tools/evil.sh (an existing file no word names), which stays writable. bash 5.2 and python 3 ran it."""
    command, target, new, old = _SUBSTITUTED_PATH[form]
    files = {"tools/evil.sh": "true\n", "tools/evil.py": "True\n", "tools/n": "evil\n"}
    out = proved_edit(tmp_path, {"bash": command}, files, target, old, new, "python3" if target.endswith(".py") else "bash")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 3: PS4 read from data, then xtrace
def test_ps4_read_from_data_runs_under_xtrace(tmp_path: Path) -> None:
    """``find ... | xargs cat | { read -r PS4; set -x; true; }``: PS4 is in UNFOLLOWED_VARIABLES for an entry's
    ``env`` and a ``PS4=`` word only; ``read`` setting it is not seen, and bash prompt-expands PS4 (command
    substitution included) before each traced command: tools/a.txt's ``$(cmd)`` runs. bash 5.2 ran it."""
    command = f"{_DATA} | {{ read -r PS4; set -x; true; }}"
    new = "$(echo PLAN''TED >&2)"
    out = proved_edit(tmp_path, {"bash": command}, {"tools/a.txt": "0\n"}, "tools/a.txt", "0", new)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 4: an integer variable set by read, printf -v, :=
_INTEGER = {
    "read": f"n=$({_DATA}); declare -i x=0; read x <<< \"$n\"",
    "printf -v": f"n=$({_DATA}); declare -i x=0; printf -v x %s \"$n\"",
    "${x:=$n}": f"n=$({_DATA}); declare -i x; : ${{x:=$n}}",
}


@pytest.mark.parametrize("form", sorted(_INTEGER))
def test_integer_variable_set_from_data(tmp_path: Path, form: str) -> None:
    """``declare -i x=0; read x <<< "$n"``: evaluated.py checks a ``declare -i`` variable's plain assignments
    (``x=$n``, ``x+=$n``), but bash evaluates as arithmetic every value given to an integer variable: by
    ``read``, ``printf -v``, ``${x:=...}`` too. tools/a.txt's ``a[$(cmd)]`` runs. bash 5.2 ran it."""
    out = proved_edit(tmp_path, {"bash": _INTEGER[form]}, {"tools/a.txt": "0\n"}, "tools/a.txt", "0", _SUBSCRIPT)
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 5: xxd writes its second operand
_XXD = {
    "pipe, then bash": "mkdir -p build; find tools -name '*.hex' | xargs cat | xxd -r -p - build/run.sh; "
                       "bash build/run.sh",
    "substitution, then bash": "mkdir -p build; xxd -r -p $(find tools -name '*.hex') build/run.sh; "
                               "bash build/run.sh",
    "into the folder run in": "find tools -name '*.hex' | xargs cat | xxd -r -p - hook.sh && bash hook.sh",
}


@pytest.mark.parametrize("form", sorted(_XXD))
def test_xxd_writes_the_script_the_hook_runs(tmp_path: Path, form: str) -> None:
    """``... | xxd -r -p - build/run.sh; bash build/run.sh``: xxd is in _STDIN_DATA, so in _READ_ONLY (no file
    written) and not in _written either, but ``xxd [-r] infile outfile`` writes outfile. The script bash runs is
    decoded from tools/x.hex, named by no word, which stays writable. xxd (vim 9) and bash 5.2 ran the text."""
    new = (_PLANT + "\n").encode().hex()
    out = proved_edit(tmp_path, {"bash": _XXD[form]}, {"tools/x.hex": "00\n"}, "tools/x.hex", "00", new, "xxd")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 6: go run of a local package
@pytest.mark.parametrize("command", ["go run ./cmd/guard", "go run .", "jq -c . | go run ./cmd/guard"])
def test_go_run_package_files(tmp_path: Path, command: str) -> None:
    """``go run ./cmd/guard``: c3b46d9 reads ``| go run ./cmd/guard`` as data, a local package's program, but
    nothing protects that package's files: ``./cmd/guard`` is a folder (which stays writable) and ``.go`` is no
    script suffix, so cmd/guard/main.go, the program go compiles and runs on the host, is writable. No go here:
    no real-tool proof."""
    files = {"cmd/guard/main.go": "package main\n\nfunc main() {}\n", "main.go": "package main\n\nfunc main() {}\n"}
    target = "main.go" if command == "go run ." else "cmd/guard/main.go"
    new = 'import "os/exec"\n\nfunc main() { exec.Command("id").Run() }'
    out = proved_edit(tmp_path, {"bash": command}, files, target, "func main() {}", new, "go")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 7: a formatter's or linter's configuration code
_CONFIG = {
    "npx eslint --fix .": ("npx eslint --fix .", "eslint.config.js"),
    "npx prettier --write .": ("npx prettier --write .", "prettier.config.js"),
    "npx lint-staged": ("npx lint-staged", "lint-staged.config.js"),
    "pre-commit run --all-files": ("pre-commit run --all-files", ".pre-commit-config.yaml"),
}


@pytest.mark.parametrize("form", sorted(_CONFIG))
def test_tool_configuration_code(tmp_path: Path, form: str) -> None:
    """``npx eslint --fix .``: the tool loads eslint.config.js (prettier.config.js, lint-staged.config.js: Node.js
    modules; .pre-commit-config.yaml: its local hooks' ``entry`` commands) from the folder it runs in before
    anything else, as make reads its Makefile, which is protected; these stay writable. No eslint, prettier,
    lint-staged or pre-commit here (no network): no real-tool proof."""
    command, target = _CONFIG[form]
    files = {target: "module.exports = {};\n" if target.endswith(".js") else "repos: []\n"}
    old = files[target].strip()
    out = proved_edit(tmp_path, {"bash": command}, files, target, old, "require('child_process').execSync('id')", "")
    assert out.split() == ["PermissionError"]


# ------------------------------------------------------------ 8: ordinary hooks that refuse every write
_ORDINARY = {
    "IFS= read loop": 'jq -r .toolName | while IFS= read -r t; do echo "$t"; done',
    "IFS= read of the payload": 'IFS= read -r payload; echo "$payload" | jq .',
    "[[ =~ ]] with an alternation": 'tool=$(jq -r .toolName)\nif [[ "$tool" =~ ^(edit|create)$ ]]; then echo ok; fi',
    "python -c reading JSON from a pipe":
        'echo "$INPUT" | python3 -c \'import json,sys; print(json.load(sys.stdin)["toolName"])\'',
    "elapsed time": 'start=$(date +%s); npx prettier --check .; echo "took $(( $(date +%s) - start ))s"',
    "(( )) of a count": 'n=$(git diff --name-only | wc -l); if (( n > 20 )); then echo "too many" >&2; exit 2; fi',
    "[[ -gt ]] of a jq count": "count=$(jq '.toolArgs | length')\nif [[ $count -gt 10 ]]; then echo big; fi",
    "an array of arguments": 'args=(--check .); npx prettier "${args[@]}"',
    "BASH_SOURCE": 'here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"; echo "$here"',
    "lower-casing": 't=$(jq -r .toolName); echo "${t,,}"',
    "required variable": 'x="${TOOL:?missing}"; echo "$x"',
}


@pytest.mark.parametrize("form", sorted(_ORDINARY))
def test_ordinary_hook_leaves_source_writable(tmp_path: Path, form: str) -> None:
    """Hooks of real repositories (policy scripts reading the payload, formatters): each makes the hooks file
    Unread, so every write of the repository is refused: ``IFS= read -r`` (the canonical read loop; IFS is in
    UNFOLLOWED_VARIABLES), a regex alternation in ``[[ =~ ]]`` (its ``|`` read as a pipe into ``create``),
    ``python3 -c`` given a pipe (its code is in the hook, reading stdin as JSON), arithmetic of a command's
    output (``$(( $(date +%s) - start ))``, ``(( n > 20 ))`` of ``wc -l``, ``[[ $count -gt 10 ]]``), and the
    expansions ``${a[@]}``, ``${BASH_SOURCE[0]}``, ``${t,,}``, ``${X:?}``. src/main.ts must stay writable."""
    files = {"src/main.ts": "export const x = 1;\n"}
    out = proved_edit(tmp_path, {"bash": _ORDINARY[form]}, files, "src/main.ts", "x = 1", "x = 2", "")
    assert out.split() != ["PermissionError"]
