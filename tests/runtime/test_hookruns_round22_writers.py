"""Round 22 breaches 5 to 7 and false positive 3, read without a sandbox, past the red team's own spellings: a data
tool that writes a file it is given (xxd's outfile, ``uniq in out``, ``gzip -d``), what ``go run``/``test``/
``generate`` compile, a formatter's or hook runner's configuration (code it loads), and ``python3 -c`` code
reading a pipe as data; each ordinary spelling here stays read, its other files writable."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_helpers import protected

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX names")

_DATA = "find tools -name '*.hex' | xargs cat"  # tools/x.hex's text, a file named by no word
_FILES = {"tools/x.hex": "00\n", "tools/run.sh.gz": "", "src/app.ts": "export {}\n", "web/src/x.js": "",
          "cmd/guard/main.go": "package main\n", "cmd/guard/main_test.go": "package main\n", "main.go": "",
          "pkg/lib/lib.go": "package lib\n", "go.mod": "module m\n", "web/.prettierrc.js": "",
          ".pre-commit-config.yaml": "repos: []\n", "eslint.config.mjs": "", "package.json": "{}\n"}


def _protected(tmp_path: Path, command: str, target: str) -> bool:
    """Whether the hook ``command`` makes ``target`` a script it runs (or its file Unread)."""
    return protected(tmp_path, command, target, _FILES)


@pytest.mark.parametrize("command", [
    f"{_DATA} | xxd -r -p - build/run.sh; bash build/run.sh",
    f"{_DATA} | xxd -r -p -c 30 - build/run.sh; bash build/run.sh",
    f"xxd -r -p $({_DATA}) build/run.sh; bash build/run.sh",
    "xxd -r -p tools/x.hex run.sh && sh run.sh",
    f"{_DATA} | uniq - build/run.sh; bash build/run.sh",
    "uniq tools/x.hex build/run.sh; bash build/run.sh",
    "gzip -d tools/run.sh.gz; bash tools/run.sh",
    "gunzip -f tools/run.sh.gz && ./tools/run.sh",
    f"{_DATA} | shuf -o build/run.sh; bash build/run.sh",
    f"{_DATA} | base64 -d | yq -i . build/run.sh; bash build/run.sh",
])
def test_a_data_tool_writing_the_script_run(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "src/app.ts")  # Unread: the script's text comes from what is not read


@pytest.mark.parametrize("command", ["xxd tools/x.hex | head", "gzip -dc tools/run.sh.gz | wc -c",
                                     "xxd -p tools/x.hex > /dev/null; bash .github/hooks/check.sh"])
def test_a_data_tool_writing_nothing_run_is_read(tmp_path: Path, command: str) -> None:
    assert not _protected(tmp_path, command, "src/app.ts")


@pytest.mark.parametrize(("command", "target"), [
    ("go run ./cmd/guard", "cmd/guard/main.go"),
    ("go run .", "main.go"),
    ("go run ./cmd/guard", "go.mod"),
    ("jq -c . | go run ./cmd/guard", "cmd/guard/main.go"),
    ("go test ./...", "cmd/guard/main_test.go"),
    ("go generate ./...", "pkg/lib/lib.go"),
    ("cd cmd/guard && go run .", "cmd/guard/main.go"),
    ("cd cmd/guard && go run .", "go.mod"),
    ("go -C cmd/guard run .", "cmd/guard/main.go"),
    ("go run cmd/guard/main.go", "cmd/guard/main.go"),
    ("go test", "main.go"),
    ("go run m/cmd/guard", "cmd/guard/main.go"),
])
def test_go_runs_its_package_files(tmp_path: Path, command: str, target: str) -> None:
    assert _protected(tmp_path, command, target)


@pytest.mark.parametrize(("command", "target"), [
    ("go run ./cmd/guard", "pkg/lib/lib.go"),  # an import of the module: the repository's own code
    ("go vet ./...", "cmd/guard/main.go"),
    ("go run golang.org/x/tools/cmd/stringer@latest", "main.go"),
])
def test_go_leaves_other_files_writable(tmp_path: Path, command: str, target: str) -> None:
    assert not _protected(tmp_path, command, target)


@pytest.mark.parametrize(("command", "target"), [
    ("npx eslint --fix .", "eslint.config.mjs"),
    ("npx eslint --fix .", "package.json"),
    ("cd web && npx eslint src", "eslint.config.mjs"),  # looked for upward
    ("cd web && npx prettier@3 --write .", "web/.prettierrc.js"),
    ("npx prettier --check .", ".prettierrc.cjs"),
    ("npx lint-staged", ".lintstagedrc.mjs"),
    ("pre-commit run --all-files", ".pre-commit-config.yaml"),
    ("pnpm exec eslint .", "eslint.config.ts"),
])
def test_tool_configuration_is_protected(tmp_path: Path, command: str, target: str) -> None:
    assert _protected(tmp_path, command, target)


def test_tool_configuration_leaves_source_writable(tmp_path: Path) -> None:
    assert not _protected(tmp_path, "npx eslint --fix . && npx prettier --write .", "src/app.ts")


_PAYLOAD = 'echo "$INPUT" | python3 -c '


@pytest.mark.parametrize("code", [
    'import json,sys; print(json.load(sys.stdin)["toolName"])',
    'import json, sys\nd = json.load(sys.stdin)\nsys.exit(2 if d["toolName"] == "bash" else 0)',
    'from json import load; import sys as s; print(load(s.stdin).get("x"))',
    'import sys, re; print(re.sub("a", "b", sys.stdin.read()))',
])
def test_python_c_reading_data(tmp_path: Path, code: str) -> None:
    assert not _protected(tmp_path, _PAYLOAD + "'" + code + "'", "src/app.ts")


@pytest.mark.parametrize("code", [
    "import sys; exec(sys.stdin.read())",
    "import sys; eval(sys.stdin.read())",
    "import sys; compile(sys.stdin.read(), 'x', 'exec')",
    "import os; os.system(input())",
    "import subprocess, sys; subprocess.run(sys.stdin.read(), shell=True)",
    "import runpy",
    "import code; code.interact()",
    "__import__('os').system(input())",
    "import sys; getattr(__builtins__, 'ex' + 'ec')(sys.stdin.read())",
    "import sys; sys.modules['os'].system(input())",
    "import sys; sys._getframe().f_builtins['exec'](input())",
    "import pickle, sys; pickle.load(sys.stdin.buffer)",
    "import importlib",
    "from os import system; system(input())",
    "from json import *",
    "import sys; open('run.sh', 'w').write(sys.stdin.read())",
    "import scripts.guard",
])
def test_python_c_running_or_writing_what_it_reads(tmp_path: Path, code: str) -> None:
    assert _protected(tmp_path, _PAYLOAD + '"' + code + '"', "src/app.ts")


@pytest.mark.parametrize("command", [
    "echo x | python3 -i -c 'import sys'", "echo x | python3 -ic 'import sys'", "echo x | python3 -",
    "echo x | python3 -c \"import json; print($X)\"", "echo x | python3", "echo x | node -e 'x'",
])
def test_python_reading_code_from_the_pipe(tmp_path: Path, command: str) -> None:
    assert _protected(tmp_path, command, "src/app.ts")
