"""Round 21 (A) findings 1, 3 and 5, read without a sandbox, in the spellings past the red team's own: a newline
ends a command and a ``#`` at a word's start a comment (:func:`hookruns.words._command_lines`); a value not known
here that bash evaluates as arithmetic or as a variable's name (:mod:`hookruns.evaluated`); a variable bash sets
itself, or one a word names by an expansion. Each attack spelling was run with bash 5.2, which ran the planted
text; each ordinary hook here stays read, its other files writable (one through the sandbox)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import edit_output, hooked_workspace, protected

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_DATA = "find tools -name '*.txt' | xargs cat"  # tools/a.txt's text, a file named by no word
_FILES = {"tools/a.txt": "0\n", "tools/name": "evil\n", "tools/guard.sh": "exit 0\n", "tools/evil.sh": "exit 0\n",
          "tools/1.sh": "exit 0\n", "parts/run.sh": "true\n", "src/app.ts": "export {}\n"}


def _protected(tmp_path: Path, command: str, target: str) -> bool:
    """Whether the hook ``command`` makes ``target`` a script it runs (or its file Unread)."""
    return protected(tmp_path, command, target, _FILES)


_LINES = [  # finding 1: a newline, a comment, a here-document
    f"true\n\n$({_DATA})",
    f"echo ok # it's\n$({_DATA})",
    f"if true\nthen\n$({_DATA})\nfi",
    f"bash -c 'true\n$({_DATA})'",
    f"cat <<'EOF'\nit's\nEOF\n{_DATA} | sh",
    f"{_DATA} |\nsh",
    f": \"it's\"\n{_DATA} | bash",
    f"echo a;#'\n{_DATA} | sh",
    f"bash <<'EOF'\n{_DATA} | sh\nEOF",
    f"cat <<EOF\n$($({_DATA}))\nEOF",
    f"cat <<-EOF | sh\n\t$({_DATA})\n\tEOF",
    f"case x in\n  a) {_DATA} | sh ;;\nesac",
    f"case $($({_DATA})) in a) true;; esac",
    f"{_DATA} | case x in a) sh;; esac",
    f"echo $(( 1 << 2 ))\n$({_DATA})",  # arithmetic's `<<` opens no here-document
    f"echo $[ 1 << 2 ]\n$({_DATA})",
    f"echo \"it's\n$({_DATA} | sh)\"",  # a quoted word's substitution is code, whatever quote its text opens
]


@pytest.mark.parametrize("command", _LINES)
def test_a_newline_ends_a_command_and_a_comment_is_none(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "tools/a.txt")


def test_a_folder_copied_on_another_line_protects_its_source(tmp_path: Path) -> None:
    assert _protected(tmp_path, "mkdir -p build\ncp -a parts/. build\nbash ./build/run.sh", "parts/run.sh")


_ARITHMETIC = [  # finding 3: tools/a.txt holds `a[$(cmd)]`
    f"{_DATA} | {{ read -r n; (( n > 3 )); }}",
    f"{_DATA} | {{ read -r n; echo $(( n + 1 )); }}",
    f"{_DATA} | {{ read -r n; let \"m=n\"; }}",
    f"{_DATA} | {{ read -r; [[ $REPLY -lt 3 ]]; }}",
    f"n=`{_DATA}`; [[ $n -ge 1 ]]",
    f"{_DATA} | {{ read -r n; typeset -i y=$n; }}",
    f"{_DATA} | {{ read -r n; [ -v \"$n\" ]; }}",
    f"{_DATA} | while read -r n; do a[$n]=1; done",
    f"{_DATA} | {{ read -r n; [[ n -gt 3 ]]; }}",
    f"{_DATA} | {{ read -r n; echo $[n]; }}",
    f"{_DATA} | {{ read -r n; declare -i x; x=$n; }}",
    f"[[ $({_DATA}) -gt 3 ]]",
    f"{_DATA} | {{ read -r n; for ((i=n; i<1; i++)); do :; done; }}",
    f"{_DATA} | {{ read -r n; c=$((n+1)); }}",
    f"{_DATA} | {{ read -r n; echo \"$((n))\"; }}",
]


@pytest.mark.parametrize("command", _ARITHMETIC)
def test_a_value_read_into_arithmetic_is_unread(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "tools/a.txt")


_IMPLICIT = [  # finding 5: the hook runs tools/evil.sh
    "REPLY=guard; select x in a; do break; done < tools/name; bash tools/$REPLY.sh",
    "MAPFILE=guard; readarray -t < tools/name; bash tools/$MAPFILE.sh",
    "OPTARG=guard; getopts x: o -xevil; bash tools/$OPTARG.sh",
    "BASH_REMATCH=guard; [[ evil =~ .* ]]; bash tools/$BASH_REMATCH.sh",
    'T=guard; X=; read -r "$X"T < tools/name; bash tools/$T.sh',
    "T=guard; X=; read -r $X\\T < tools/name; bash tools/$T.sh",
    "T=guard; X=; mapfile -t $X'T' < tools/name; bash tools/$T.sh",
    "T=guard; X=; typeset $X'T'=evil; bash tools/$T.sh",
    "T=guard; X=; export $X'T'=evil; bash tools/$T.sh",
    'T=guard; X=; readonly $X"T"=evil; bash tools/$T.sh',
    "T=guard; X=; printf -v$X'T' %s evil; bash tools/$T.sh",
    "T=guard; X=; eval \"$X\"'T=evil'; bash tools/$T.sh",
    "T=guard; X=; unset $X'T'; T=evil; bash tools/$T.sh",
    "T=guard; read -r $Y'T' < tools/name; bash tools/$T.sh",
]


@pytest.mark.parametrize("command", _IMPLICIT)
def test_a_variable_set_without_its_name_is_not_its_literal(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "tools/evil.sh")


_ORDINARY = [
    "set -euo pipefail\npayload=$(cat)\ntool=$(echo \"$payload\" | jq -r .toolName)\n"
    "if [ \"$tool\" = bash ]; then exit 2; fi",
    "jq -r .n | { read -r n; [ \"$n\" -gt 3 ]; }",
    "x=1; ((x++)); echo $x",
    "[[ $# -gt 0 ]] || exit 0",
    "cat >/dev/null\n[[ $? -ne 0 ]] && exit 2\necho ok",
    "n=5; [[ $n -gt 3 ]] && echo big",
    "count=0\nwhile read -r f; do count=$((count+1)); done < <(git diff --name-only)\n[ \"$count\" -gt 10 ] && exit 2",
    "# a policy hook: it's ours\ninput=$(cat)   # the payload\ncase \"$(echo \"$input\" | jq -r .toolName)\" in\n"
    "  bash|shell) echo '{\"permissionDecision\":\"deny\"}' ;;\n  *) exit 0 ;;\nesac",
    "cat <<'EOF'\n{\"permissionDecision\": \"allow\"}\nEOF",
    "if git diff --quiet; then\n  echo clean\nelse\n  exit 2\nfi",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "read -r line; printf -v msg '%s' \"$line\"; echo \"$msg\"",
    "while getopts ab opt; do echo $opt; done",
    "x='a #'; echo ${x% #} a#b # it's no comment's quote",
]


@pytest.mark.parametrize("command", _ORDINARY)
def test_an_ordinary_multi_line_hook_stays_read(tmp_path: Path, command: str) -> None:
    """Lines, comments, ``case`` patterns (``bash|shell)`` is no pipe), ``[ "$n" -gt 3 ]`` (no arithmetic in
    ``[``), arithmetic on the command's own numbers: ``src/app.ts`` is no script of these hooks."""
    assert not _protected(tmp_path, command, "src/app.ts")


def test_a_multi_line_policy_hook_leaves_source_writable_in_the_sandbox(tmp_path: Path) -> None:
    base, ws = hooked_workspace(tmp_path, [{"type": "command", "bash": _ORDINARY[0]}])
    (ws / "src").mkdir(parents=True, exist_ok=True)
    (ws / "src/app.ts").write_text("exit 0\n")
    assert "PermissionError" not in edit_output(ws, base, "src/app.ts")
