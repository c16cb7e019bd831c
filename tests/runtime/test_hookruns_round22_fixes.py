"""Round 22 findings 1-4 and false positives 1, 2, 4, 5, read without a sandbox, in spellings past the red
team's own: the attack spellings must keep a script protected (or the file Unread), the near misses of each
allowance must too, and the ordinary hooks must leave other files writable."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import protected

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_DATA = "find tools -name '*.txt' | xargs cat"  # tools/a.txt's text, a file named by no word
_FILES = {"tools/a.txt": "0\n", "tools/evil.sh": "exit 0\n", "src/app.ts": "export {}\n"}


def _protected(tmp_path: Path, command: str, target: str) -> bool:
    """Whether the hook ``command`` makes ``target`` a script it runs (or its file Unread)."""
    return protected(tmp_path, command, target, _FILES)


_ATTACKS = [
    f"# x \\\n{_DATA} | sh",  # 1: a comment's backslash joins no line
    f"echo a \\\n# b \\\n{_DATA} | sh",
    f'echo "$(true # x \\\n{_DATA} | sh)"',
    "bash $(echo tools)/evil.sh",  # 2: a substitution glued to a word
    "bash tools/$(echo e)vil.sh",
    "x=tools/$(echo evil).sh; bash $x",
    f"{_DATA} | {{ read -r -t 1 PROMPT_COMMAND; true; }}",  # 3: a code variable a reader sets
    f"{_DATA} | mapfile -t PS4; set -x; true",
    f"printf -v PS4 %s \"$({_DATA})\"; set -x; true",
    f": ${{PS4:=$({_DATA})}}; set -x; true",
    f"{_DATA} | {{ local -i n; read n; }}",  # 4: an integer variable a reader sets
    f"typeset -i n; {_DATA} | getopts a n",
    "n=$(wc -l *); (( n > 2 ))",  # near misses of the numeric substitutions: file names, a redefined length
    "n=$(jq 'def length: .a; .x | length'); (( n ))",
    "n=$(jq -r .a); (( n ))",
    "n=$(date +%F); (( n ))",
    "n=$(grep -c x f1 f2); (( n ))",
    "n=$(wc -l); read n; (( n ))",
    f"echo $(( $({_DATA}) ))",
    f"IFS=/ read -r a b; {_DATA} | sh",  # near misses of the others
    "IFS=/; x=tools/evil.sh; $x",
    "echo [[ =~ a | sh",
    f"a=($({_DATA})); echo ${{a[$(id)]}}",
]


@pytest.mark.parametrize("command", _ATTACKS)
def test_attack_spellings_stay_protected(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "tools/evil.sh" if "evil" in command else "tools/a.txt") or \
        _protected(tmp_path, command, "tools/evil.sh")


_ORDINARY = [
    "while IFS=$'\\n' read -r line; do echo \"$line\"; done",
    'if [[ "$x" =~ ^(a|b)$ ]] && [[ $y =~ c|d ]]; then echo ok; fi',
    "n=$(jq -c '.files | length'); if (( n > 3 )); then exit 2; fi",
    "n=$(grep -c TODO); [[ $n -gt 0 ]] && echo todo",
    'files=(a b); echo "${#files[@]}" "${files[0]}" "${X^^}" "${X:?unset}"',
    'cd "$(dirname "${BASH_SOURCE[0]}")" && npx prettier --check .',
]


@pytest.mark.parametrize("command", _ORDINARY)
def test_ordinary_hooks_stay_read(tmp_path: Path, command: str) -> None:
    assert not _protected(tmp_path, command, "src/app.ts")
