"""File names that are not UTF-8 (issue 42 item 6, issue 40 item 11): a pull request can commit one, and every
listing or search that met it ended the whole run with a UnicodeEncodeError no ``try`` could catch. Such names
reach the program quoted as git quotes them, and come back the same way (codeact.core.pathnames)."""
from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from codeact.core.pathnames import clean, needs_quoting, quote, quote_all, readings, unquote

LEGACY = b"legacy-\xe9t\xe9.txt"  # Latin-1 bytes: not UTF-8
FOLDER = b"d\xff"
NESTED = b"m\xe9.py"


def _make(root: Path) -> None:
    try:
        (root / os.fsdecode(LEGACY)).write_text("hello TODO\n")
        (root / os.fsdecode(FOLDER)).mkdir()
        (root / os.fsdecode(FOLDER) / os.fsdecode(NESTED)).write_text("import os\n\n\ndef f():\n    pass\n")
    except OSError as exc:  # APFS and some others refuse such names outright: nothing to show the program
        pytest.skip(f"this file system refuses a name that is not UTF-8: {exc}")


def _git_shown(root: Path, raw: bytes) -> str:
    """The path as ``git ls-files`` prints it (the reference form)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    out = subprocess.run(["git", "-C", str(root), "ls-files", "--", os.fsdecode(raw)], check=True,
                         capture_output=True).stdout
    return out.decode("ascii").strip()


# ------------------------------------------------------------------------------------------------- the encoding
def test_a_bare_name_is_quoted_exactly_as_git_ls_files_prints_it(tmp_path):
    _make(tmp_path)
    assert quote(os.fsdecode(LEGACY)) == _git_shown(tmp_path, LEGACY) == '"legacy-\\351t\\351.txt"'
    assert unquote(_git_shown(tmp_path, FOLDER + b"/" + NESTED)) == os.fsdecode(FOLDER + b"/" + NESTED)


def test_other_names_are_unchanged():
    for name in ("src/app.py", "café/naïve.md", "a b/c'd.txt", 'say "hi".txt', ""):
        assert not needs_quoting(name) and quote(name) == name and unquote(name) == name
    paths = ["a", "b/é"]
    assert quote_all(paths) is paths


def test_a_control_character_or_a_backslash_is_quoted_and_survives_the_sandbox_pathlib():
    """As git quotes them: a newline would split a listing's line, and the sandbox's pathlib reads ``\\`` as a
    separator (``a\\b.txt`` would name ``a/b.txt``); the ``\\`` is quoted ``\\134`` (git's ``\\\\`` would become an
    empty part there, dropped), and git's form is read too."""
    for name, shown in (("tab\there", '"tab\\there"'), ("a\\b.txt", '"a\\134b.txt"'), ("d/n\nl", 'd/"n\\nl"'),
                        ("x\x7f", '"x\\177"')):
        assert needs_quoting(name) and quote(name) == shown and quote_all([name]) == [shown]
        assert unquote(shown) == name and unquote(shown.replace("\\", "/")) == name
    assert unquote('"a\\\\b.txt"') == "a\\b.txt"


def test_the_form_is_reversible_for_any_name_and_survives_the_sandbox_pathlib():
    """Every name round-trips; a name the sandbox's pathlib splits at its backslashes reads back too."""
    rng = random.Random(7)
    alphabet = [b"a", b"0", b"3", b"n", b" ", b"\xe9", b"\xff", "é".encode(), b'"', b"\\", b"/", b"\n"]
    for _ in range(20_000):
        raw = b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if raw.startswith(b"/") or raw.endswith(b"/") or b"//" in raw:
            continue
        name = os.fsdecode(raw)
        shown = quote(name)
        shown.encode("utf-8")  # what the sandbox can hold
        assert unquote(shown) == name, (raw, shown)
        if not {b"\\", b'"', b"\n"} & {bytes([c]) for c in raw}:
            mangled = re.sub(r"/+", "/", shown.replace("\\", "/"))  # Path(shown) in pydantic-monty 1.4.0
            assert unquote(mangled) == name, (raw, shown, mangled)


def test_a_listed_path_reads_back_as_itself_however_its_names_are_joined():
    """The idioms quote each listed name alone; the path the program joins of them (os.path.join, or the sandbox's
    pathlib, which eats every ``\\``) reads back as that path, whatever the names hold: quotes at either end,
    backslashes, control characters, bytes that are not UTF-8. Where pathlib's loss makes the text stand for
    several paths, the real one is among its readings (the one that exists is taken, Workspace.reading)."""
    rng = random.Random(40)
    alphabet = [b"a", b"b", b"0", b" ", b'"', b'"', b"\\", b"\n", b"\x08", b"\t", b"\xe9", b"\xff", "\u00e9".encode()]
    for _ in range(20_000):
        names = [os.fsdecode(b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))))
                 for _ in range(rng.randint(1, 4))]
        path = "/".join(names)
        listed = "/".join(quote(name) for name in names)  # os.walk's top joined to its names
        listed.encode("utf-8")
        assert listed == quote(path) and unquote(listed) == path, (names, listed)
        if any("\\" in name for name in names):
            continue  # pathlib turns ``\\`` into one separator: that loss cannot be undone
        mangled = re.sub(r"/+", "/", listed.replace("\\", "/"))  # Path(...) in pydantic-monty
        assert readings(mangled)[0] == path, (names, listed, mangled)
        if _is_utf8(names[0]) and unquote(names[0]) == names[0]:  # a folder the program typed raw (a text that
            # reads as itself alone), joined by pathlib to the names listed in it
            typed = re.sub(r"/+", "/", "/".join([names[0], *map(quote, names[1:])]).replace("\\", "/"))
            assert path in readings(typed), (names, typed)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_clean_quotes_only_what_the_sandbox_cannot_hold():
    bad = os.fsdecode(LEGACY)
    assert clean(["a", {"path": bad, "n": 1}]) == ["a", {"path": quote(bad), "n": 1}]
    assert clean(["a", {"path": "b"}]) is None


# ---------------------------------------------------------------------------------------- through a real program
@pytest.fixture
def ws(fixture_workspace: Path) -> Path:
    _make(fixture_workspace)
    return fixture_workspace


SHOWN = '"legacy-\\351t\\351.txt"'
NESTED_SHOWN = '"d\\377"/"m\\351.py"'

PROGRAMS = {
    "glob": ('glob(pattern="*.txt") + glob(pattern="*.py", path=' + repr(quote(os.fsdecode(FOLDER))) + ")",
             [SHOWN, NESTED_SHOWN]),
    "grep": ('[h["path"] for h in grep(pattern="hello TODO")]', [SHOWN]),
    "outline": ('sorted({i["path"] for i in outline(path=' + repr(quote(os.fsdecode(FOLDER))) + ")})",
                [NESTED_SHOWN]),
    "view folder": ('[n for n in view(path=".").splitlines() if "\\\\" in n]', ['"d\\377"/', SHOWN]),
    "os.listdir": ('import os\n[n for n in os.listdir(".") if n.startswith(\'"\')]', ['"d\\377"', SHOWN]),
    "os.walk": ('import os\n[os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs if "\\\\" in d + f]',
                ["./" + SHOWN, "./" + NESTED_SHOWN]),
    "pathlib": ('from pathlib import Path\n'
                'sorted(p.read_text() for p in Path(".").rglob("*") if p.is_file() and str(p).startswith(\'"\'))',
                ["hello TODO\n", "import os\n\n\ndef f():\n    pass\n"]),
    "glob.glob": ('import glob\nsorted(p for p in glob.glob("**", recursive=True) if p.startswith(\'"\'))',
                  ['"d\\377"', NESTED_SHOWN, SHOWN]),
    "open and view back": ('[open(p).read() for p in glob(pattern="*.txt") if p.startswith(\'"\')] + '
                           '[view(path=p) for p in glob(pattern="*.py") if p.startswith(\'"\')]',
                           ["hello TODO\n", "import os\n\n\ndef f():\n    pass\n"]),
    "git's whole form": ('view(path=' + repr('"d\\377/m\\351.py"') + ').splitlines()[0]', "import os"),
}


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_every_listing_names_such_a_file_in_its_quoted_form(ws, run_program, case):
    code, expected = PROGRAMS[case]
    result = run_program(code, workspace=ws)
    assert result.error is None, result.error
    assert result.result == expected


def test_edit_accepts_the_quoted_form_and_writes_the_real_file(ws, run_program):
    result = run_program('p = [p for p in glob(pattern="*.txt") if p.startswith(\'"\')][0]\n'
                         'edit(path=p, old_str="hello", new_str="bye")\nview(path=p)', workspace=ws)
    assert result.error is None, result.error
    assert result.result == "bye TODO\n"
    assert (ws / os.fsdecode(LEGACY)).read_bytes() == b"bye TODO\n"


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_both_search_engines_quote_the_name(ws, make_ctx, monkeypatch, engine):
    from codeact.tools import search
    from codeact.tools.search import ripgrep

    if engine == "python":
        monkeypatch.setattr(ripgrep, "_rg_cache", None)
    elif search.rg_binary() is None:
        pytest.skip("ripgrep is not installed")
    ctx = make_ctx(ws)
    assert [p for p in search.glob(ctx, pattern="*") if "\\" in p] == [NESTED_SHOWN, SHOWN]
    assert [h["path"] for h in search.grep(ctx, pattern="TODO|import os") if "\\" in h["path"]] == [
        NESTED_SHOWN, SHOWN]
    assert search.grep(ctx, pattern="hello", path=SHOWN) == [{"path": SHOWN, "line": 1, "text": "hello TODO"}]
