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


@pytest.mark.parametrize("ending", [False, True], ids=["whole", "ending kept"])
def test_the_form_is_reversible_for_any_name_and_survives_the_sandbox_pathlib(ending):
    """Every name round-trips, in either form; a name the sandbox's pathlib splits at its backslashes reads back
    too."""
    rng = random.Random(7)
    alphabet = [b"a", b"0", b"3", b"n", b" ", b"\xe9", b"\xff", "é".encode(), b'"', b"\\", b"/", b"\n"]
    for _ in range(20_000):
        raw = b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if raw.startswith(b"/") or raw.endswith(b"/") or b"//" in raw:
            continue
        name = os.fsdecode(raw)
        shown = quote(name, ending=ending)
        shown.encode("utf-8")  # what the sandbox can hold
        assert unquote(shown) == name, (raw, shown)
        if not {b"\\", b'"', b"\n"} & {bytes([c]) for c in raw}:
            mangled = re.sub(r"/+", "/", shown.replace("\\", "/"))  # Path(shown) in pydantic-monty 1.4.0
            assert unquote(mangled) == name, (raw, shown, mangled)


@pytest.mark.parametrize("ending", [False, True], ids=["whole", "ending kept"])
def test_a_listed_path_reads_back_as_itself_however_its_names_are_joined(ending):
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
        listed = "/".join(quote(name, ending=ending) for name in names)  # os.walk's top joined to its names
        listed.encode("utf-8")
        assert listed == quote(path, ending=ending) and unquote(listed) == path, (names, listed)
        if any("\\" in name for name in names):
            continue  # pathlib turns ``\\`` into one separator: that loss cannot be undone
        mangled = re.sub(r"/+", "/", listed.replace("\\", "/"))  # Path(...) in pydantic-monty
        assert readings(mangled)[0] == path, (names, listed, mangled)
        if _is_utf8(names[0]) and unquote(names[0]) == names[0]:  # a folder the program typed raw (a text that
            # reads as itself alone), joined by pathlib to the names listed in it
            typed = "/".join([names[0], *(quote(name, ending=ending) for name in names[1:])])
            typed = re.sub(r"/+", "/", typed.replace("\\", "/"))
            assert path in readings(typed), (names, typed)


# names a repository can commit that reach the program quoted, each with the form the sandbox's file idioms show
AWKWARD = {
    "a\\b.txt": '"a\\134"b.txt',
    os.fsdecode(LEGACY): '"legacy-\\351t\\351".txt',
    "ctl\x01.txt": '"ctl\\001".txt',
    "tab\there.md": '"tab\\t"here.md',
    '"quoted.txt': '"\\""quoted.txt',
    '"both".txt': '"\\"both\\"".txt',
    "x\x01": '"x\\001"',  # no plain ending: quoted whole, as git does
    'ends"': '"ends\\""',
    '"a\\134"b.txt': '"\\"a\\134134\\""b.txt',  # a real name that looks like the first one's form
    "caf\udce9_test.py": '"caf\\351"_test.py',
    "d\udcff/m\udce9.py": '"d\\377"/"m\\351".py',
}


def test_the_sandbox_form_keeps_the_plain_ending_of_a_quoted_name():
    """The sandbox's idioms show a quoted name with its plain ending after the closing quote, so a glob by that
    ending (pydantic-monty matches the forms) lists it; the tools keep git's form. Both read back, as they are and
    as the sandbox's pathlib splits them at each ``\\``; a real name that looks like a form is quoted apart."""
    for name, shown in AWKWARD.items():
        assert quote(name, ending=True) == shown and quote_all([name], ending=True) == [shown], name
        for form in (shown, quote(name)):
            assert unquote(form) == name, (name, form)
            assert name in readings(re.sub(r"/+", "/", form.replace("\\", "/"))), (name, form)
    assert len(set(AWKWARD.values())) == len(AWKWARD)
    assert quote("a\\b.txt") == '"a\\134b.txt"'  # git's form, unchanged where the tools show it
    # a text with a plain ending is a form only where its quoted head holds an escape (every quoted name's does):
    # typed raw, a name such as '"hi" there.txt' is not read as 'hi there.txt'
    for text in ('"hi" there.txt', '"a"b"c', '"a\\134"b\\c', '"a\\134"b"'):
        assert unquote(text) == text, text


def test_no_two_names_share_a_form_in_either_form():
    """Over many awkward names (quotes anywhere, backslashes, control characters, bytes that are not UTF-8, plain
    endings), each form names one name: no two names share a form, and each form reads back as its name."""
    rng = random.Random(9)
    alphabet = [b"a", b"b", b".", b"t", b"x", b" ", b'"', b'"', b"\\", b"1", b"3", b"4", b"\n", b"\x01", b"\xe9",
                "\u00e9".encode()]
    for ending in (False, True):
        seen: dict[str, str] = {}
        for _ in range(20_000):
            name = os.fsdecode(b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) + b".txt")
            shown = quote(name, ending=ending)
            assert seen.setdefault(shown, name) == name, (shown, seen[shown], name)
            assert unquote(shown) == name, (name, shown)
            if ending:
                assert shown.endswith(".txt"), (name, shown)  # the plain ending kept, a quoted name's too


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
# the sandbox's file idioms keep a quoted name's plain ending after the closing quote (Path.glob matches the forms)
IDIOM_SHOWN = '"legacy-\\351t\\351".txt'
IDIOM_NESTED_SHOWN = '"d\\377"/"m\\351".py'

PROGRAMS = {
    "glob": ('glob(pattern="*.txt") + glob(pattern="*.py", path=' + repr(quote(os.fsdecode(FOLDER))) + ")",
             [SHOWN, NESTED_SHOWN]),
    "grep": ('[h["path"] for h in grep(pattern="hello TODO")]', [SHOWN]),
    "outline": ('sorted({i["path"] for i in outline(path=' + repr(quote(os.fsdecode(FOLDER))) + ")})",
                [NESTED_SHOWN]),
    "view folder": ('[n for n in view(path=".").splitlines() if "\\\\" in n]', ['"d\\377"/', SHOWN]),
    "os.listdir": ('import os\n[n for n in os.listdir(".") if n.startswith(\'"\')]', ['"d\\377"', IDIOM_SHOWN]),
    "os.walk": ('import os\n[os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs if "\\\\" in d + f]',
                ["./" + IDIOM_SHOWN, "./" + IDIOM_NESTED_SHOWN]),
    "pathlib": ('from pathlib import Path\n'
                'sorted(p.read_text() for p in Path(".").rglob("*") if p.is_file() and str(p).startswith(\'"\'))',
                ["hello TODO\n", "import os\n\n\ndef f():\n    pass\n"]),
    "glob.glob": ('import glob\nsorted(p for p in glob.glob("**", recursive=True) if p.startswith(\'"\'))',
                  ['"d\\377"', IDIOM_NESTED_SHOWN, IDIOM_SHOWN]),
    "open and view back": ('[open(p).read() for p in glob(pattern="*.txt") if p.startswith(\'"\')] + '
                           '[view(path=p) for p in glob(pattern="*.py") if p.startswith(\'"\')]',
                           ["hello TODO\n", "import os\n\n\ndef f():\n    pass\n"]),
    "pathlib glob by ending": ('from pathlib import Path\n'
                               'sorted(p.read_text() for p in [*Path(".").glob("*.txt"), *Path(".").rglob("*.py")] '
                               'if "351" in str(p))', ["hello TODO\n", "import os\n\n\ndef f():\n    pass\n"]),
    "the idioms' form back to the tools": ('import os\n[view(path=n) for n in os.listdir(".") if "351" in n] + '
                                           '[h["text"] for h in grep(pattern="hello", path=' + repr(IDIOM_SHOWN) + ')]',
                                           ["hello TODO\n", "hello TODO"]),
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


# --------------------------------------------------------------------- every idiom over awkward names, read back
_LISTINGS = """\
import glob as g
import os
from pathlib import Path


def back(p):
    try:
        return Path(p).read_text() if isinstance(p, Path) else open(p).read()
    except Exception as exc:
        return type(exc).__name__ + ": " + str(exc)


def each(paths, read=back):
    return [[str(p), read(p)] for p in paths]


top = Path("awk")
{
    "Path.glob *.txt": each(top.glob("*.txt")),
    "Path.glob *b.txt": each(top.glob("*b.txt")),
    "Path.glob **/*.txt": each(top.glob("**/*.txt")),
    "Path.rglob *.py": each(top.rglob("*.py")),
    "Path.rglob *.txt, view": each(top.rglob("*.txt"), lambda p: view(path=str(p))),
    "Path.glob *": each(p for p in top.glob("*") if p.is_file()),
    "Path.iterdir": each(p for p in top.iterdir() if p.is_file()),
    "os.listdir": each(os.path.join("awk", n) for n in os.listdir("awk") if os.path.isfile(os.path.join("awk", n))),
    "os.walk": each(os.path.join(d, f) for d, _, fs in os.walk("awk") for f in fs),
    "os.walk, pathlib": each(Path(d) / f for d, _, fs in os.walk("awk") for f in fs),
    "glob.glob **/*.txt": each(g.glob("awk/**/*.txt", recursive=True)),
    "glob tool **/*.txt": each(glob(pattern="**/*.txt", path="awk")),
}
"""


def _awkward_names() -> list[str]:
    """Paths below ``awk/``: the named awkward ones, a few plain ones beside them, and random ones."""
    names = [name for name in AWKWARD if name != "d\udcff/m\udce9.py"]
    names += ["b.txt", "a/b.txt", 'say "hi".txt', '"a/n"y.txt', "f\\g/h.txt", "d\udcff/m\udce9.py", "d\udcff/n.txt",
              "\udce9/\"\".py", "noending"]
    rng = random.Random(12)
    alphabet = [b"a", b"b", b" ", b".", b'"', b"\\", b"\n", b"\x01", b"\t", b"\xe9", b"\xff", "\u00e9".encode()]
    while len(names) < 40:
        raw = b"x" + b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        name = os.fsdecode(raw + rng.choice([b".txt", b".py", b"b.txt", b""]))
        if name not in names:
            names.append(name)
    return names


def test_every_idiom_lists_awkward_names_by_their_ending_and_reads_each_back(ws, run_program):
    """Files whose names reach the program quoted (a ``\\``, a control character, bytes that are not UTF-8, a
    ``"`` at either end, a real name that looks like a quoted form, none of them with a plain ending) beside
    plain ones: ``Path.glob``/``rglob`` by an ending (``*.txt``, ``*b.txt``, ``**/*.txt``, ``*.py``), ``iterdir``,
    ``os.listdir``, ``os.walk``, ``glob.glob`` and the glob tool each list exactly the files a glob of the real
    names gives, and each listed path, read back (``open``, ``Path.read_text``, ``view``), is that file."""
    import fnmatch

    top = ws / "awk"
    names = _awkward_names()
    for name in names:
        path = top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(os.fsencode(name).hex())
    files = {os.fsencode(name).hex(): name for name in names}

    def matching(pattern: str, *, deep: bool) -> list[str]:
        return sorted(key for key, name in files.items()
                      if (deep or "/" not in name) and fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], pattern))

    expected = {
        "Path.glob *.txt": matching("*.txt", deep=False), "Path.glob *b.txt": matching("*b.txt", deep=False),
        "Path.glob **/*.txt": matching("*.txt", deep=True), "Path.rglob *.py": matching("*.py", deep=True),
        "Path.rglob *.txt, view": matching("*.txt", deep=True), "Path.glob *": matching("*", deep=False),
        "Path.iterdir": matching("*", deep=False), "os.listdir": matching("*", deep=False),
        "os.walk": matching("*", deep=True), "os.walk, pathlib": matching("*", deep=True),
        "glob.glob **/*.txt": matching("*.txt", deep=True), "glob tool **/*.txt": matching("*.txt", deep=True),
    }
    assert expected["Path.glob *.txt"] and expected["Path.glob *b.txt"] and expected["Path.rglob *.py"]
    result = run_program(_LISTINGS, workspace=ws)
    assert result.error is None, result.error
    for listing, want in expected.items():
        got = result.result[listing]
        assert sorted(content for _, content in got) == want, (listing, got)  # each file once, and no other
        for shown, content in got:  # the listed path names the file it read back, in the host's reading
            assert "awk/" + files[content] in readings(shown.removeprefix("./")), (listing, shown, files[content])
