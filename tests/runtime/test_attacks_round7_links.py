"""Red team, round 7 (a helper that had not seen the round's changes): the link rule past the kernel's 40 links,
outline read while a folder is swapped for a link, sql's race (a database opened by path, now under Landlock), the
write rules' link check asking the kernel through an outside link, and a listed path that read back as another
file (both closed in round 9, with the further cases found beside them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_attacks_round6_links import _run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links")


# ------------------------------------------------------------ past 40 links the rest of the path is kept as text
def _past_the_link_budget(base: Path, lead: str = "l1") -> tuple[Path, Path]:
    """``base/ws`` where ``l1 -> l2 -> ... -> l40 -> sub`` (40 links) and ``sub/evil -> base/outside``. The
    resolution part by part (resolution.resolve_beneath) counts 40 links on ``l1/evil/x`` and stops at ``evil``
    (ELOOP), keeping ``sub/evil/x`` as text without reading evil's target; that string holds ONE link, which
    everything that opens it by path follows. ``lead='m'`` adds ``m -> l2/evil`` (the 41st link inside one link's
    own resolution, as import glob's real_inside meets it)."""
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    outside = base / "outside"
    outside.mkdir()
    for i in range(1, 41):
        (ws / f"l{i}").symlink_to(f"l{i + 1}" if i < 40 else "sub")
    (ws / "sub/evil").symlink_to(outside, target_is_directory=True)
    if lead == "m":
        (ws / "m").symlink_to("l2/evil")
    return ws, outside


def test_sql_never_opens_a_database_outside_through_41_links(tmp_path: Path) -> None:
    """``sql(db='l1/evil/x.db')``: resolve_for_write accepts ``<ws>/sub/evil/x.db`` (must_exist=False keeps the
    ELOOP text), and sqlite3.connect opens it by path, following ``evil``: a database is created and written
    outside the workspace, and any SQLite file the user can read (browser history, other apps' stores) can be
    queried. Before the link rule os.path.realpath followed evil and the path was refused."""
    base = tmp_path.resolve()
    ws, outside = _past_the_link_budget(base)
    (outside / "theirs.db").write_bytes(b"")
    import sqlite3

    with sqlite3.connect(outside / "theirs.db") as conn:
        conn.execute("CREATE TABLE secrets(v)")
        conn.execute("INSERT INTO secrets VALUES ('OUTSIDE-SECRET')")
    code = ("def t(f):\n    try:\n        return repr(f())\n    except Exception as exc:\n"
            "        return type(exc).__name__ + ': ' + str(exc)\n"
            "print(t(lambda: sql(db='l1/evil/x.db', query=\"CREATE TABLE t(x); INSERT INTO t VALUES (1)\")))\n"
            "print(t(lambda: sql(db='l1/evil/theirs.db', query='SELECT v FROM secrets')))\n")
    out = _run(ws, base / "home", code)
    assert sorted(p.name for p in outside.iterdir()) == ["theirs.db"], out  # nothing written outside
    assert "OUTSIDE-SECRET" not in out, out  # nothing read outside


def test_create_and_edit_past_41_links_tell_nothing_of_what_lies_outside(tmp_path: Path) -> None:
    """``create``/``edit`` of ``l1/evil/secret.txt``: the write itself is refused (atomic.slot walks with
    O_NOFOLLOW), but first ``os.path.lexists(real)`` / ``real.is_file()`` follow ``evil``: FileExistsError
    ("already exists") when the outside file exists, a link refusal when not; edit: the link refusal vs "no such
    file". An existence oracle for any outside path."""
    answers = {}
    for present in (True, False):
        base = (tmp_path / str(present)).resolve()
        ws, outside = _past_the_link_budget(base)
        if present:
            (outside / "secret.txt").write_text("s\n")
        code = ("def t(f):\n    try:\n        return repr(f())\n    except Exception as exc:\n"
                "        return type(exc).__name__ + ': ' + str(exc)\n"
                "print(t(lambda: create(path='l1/evil/secret.txt', file_text='x')))\n"
                "print(t(lambda: edit(path='l1/evil/secret.txt', old_str='s', new_str='t')))\n")
        answers[present] = _run(ws, base / "home", code)
    assert answers[True] == answers[False], answers


def test_import_glob_past_41_links_tells_nothing_of_what_lies_outside(tmp_path: Path) -> None:
    """``m -> l2/evil``: real_inside('m') counts 41 links and returns ``<ws>/sub/evil`` as "inside"; confined_glob
    then asks ``os.path.lexists`` / ``os.path.isdir`` of names below it by path, following evil:
    ``glob.glob('m/secret.txt')`` and ``glob.glob('m/d/')`` answer whether an outside file or folder exists."""
    answers = {}
    for present in (True, False):
        base = (tmp_path / str(present)).resolve()
        ws, outside = _past_the_link_budget(base, lead="m")
        if present:
            (outside / "secret.txt").write_text("s\n")
            (outside / "d").mkdir()
        code = ("import glob\nprint(glob.glob('m/secret.txt'), glob.glob('m/d/'), glob.glob('m/d'))\n"
                "print(glob.glob('secret.txt', root_dir='m'))\n")
        answers[present] = _run(ws, base / "home", code)
    assert answers[True] == answers[False], answers


# ------------------------------------------------------------ outline under a folder swapped for a link
def test_outline_never_reads_outside_while_a_folder_is_swapped_for_a_link(ctx, fixture_workspace: Path,
                                                                          tmp_path: Path) -> None:
    """view, the file idioms, grep and glob open part by part below the root (round 5); outline resolves
    ``path=`` to a real path and then parses ``root + '/' + rel`` with ``os.open(..., O_NOFOLLOW)``, which refuses
    a link only as the LAST part: a folder on the way swapped for a link to an outside folder is followed (in this
    process, unconfined, since "this process parses too"; the workers likewise), and the outside file's
    definitions, names and docstrings come back to the program (and are kept in the outline cache)."""
    from test_edit_safety import _can_exchange, _swappable, _swapping

    from codeact.tools.outline import outline

    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    sub, link = _swappable(fixture_workspace, tmp_path / "outside", {"f.py": "def inside():\n    pass\n"},
                           {"f.py": 'def OUTSIDE_SECRET():\n    """OUTSIDE-DOCSTRING"""\n'})
    assert "inside" in str(outline(ctx, path="sub/f.py"))
    leaked: dict[str, int] = {}
    with _swapping(sub, link, "6") as swapper:
        while swapper.poll() is None:
            for name, path in (("file", "sub/f.py"), ("folder", "sub")):
                try:
                    got = str(outline(ctx, path=path))
                except Exception:  # refused or vanished: fine, never the outside content
                    continue
                if "OUTSIDE" in got:
                    leaked[name] = leaked.get(name, 0) + 1
    assert not leaked, f"an outside file's outline came back: {leaked}"


# ------------------------------------------------------------ the write rules' link check asks the kernel
@pytest.mark.parametrize("target", ["../X/config", "../X/ws/config"])
def test_a_write_under_a_protected_link_name_through_an_outside_link_tells_nothing(tmp_path: Path,
                                                                                  target: str) -> None:
    """Round 6 closed ``.github -> ../X/../ws/config`` (the text's ``..`` drops X). Without a ``..`` after X the
    target's text and the kernel agree, and both follow the OUTSIDE X: ``create('config/hooks/x.json')`` is
    refused when X is a link to the workspace (``../X/config``) or to its parent (``../X/ws/config``), allowed when
    X is a folder, a link elsewhere or absent. A committed link thus asks, per write, whether an outside path is a
    link and where it leads. The answer must not depend on X."""
    from codeact.core.boundary import Workspace
    from codeact.errors import PolicyError

    answers = {}
    for kind in ("to-ws", "to-parent", "folder", "absent"):
        base = (tmp_path / kind).resolve()
        ws = base / "ws"
        (ws / "config/hooks").mkdir(parents=True)
        if kind == "to-ws":
            (base / "X").symlink_to(ws, target_is_directory=True)
        elif kind == "to-parent":
            (base / "X").symlink_to(base, target_is_directory=True)
        elif kind == "folder":
            (base / "X/ws/config").mkdir(parents=True)
        (ws / ".github").symlink_to(target, target_is_directory=True)
        try:
            Workspace(ws).resolve_for_write("config/hooks/x.json")
            answers[kind] = "allowed"
        except PolicyError as exc:
            answers[kind] = str(exc)
    assert len(set(answers.values())) == 1, answers


def _write_answer(ws: Path, path: str) -> str:
    from codeact.core.boundary import Workspace
    from codeact.errors import PolicyError

    try:
        Workspace(ws).resolve_for_write(path)
        return "allowed"
    except PolicyError as exc:
        return str(exc)


def test_a_committed_git_link_to_an_outside_path_tells_nothing(tmp_path: Path) -> None:
    """``sub/.git -> ../../X`` made sub a work tree (an anchor whose ``.github`` link is checked) only when X
    existed: ``.exists()`` followed the link. Anything named ``.git`` now makes the folder one."""
    answers = {}
    for present in (True, False):
        base = (tmp_path / str(present)).resolve()
        ws = base / "ws"
        (ws / "sub/config/hooks").mkdir(parents=True)
        if present:
            (base / "X").mkdir()
        (ws / "sub/.git").symlink_to("../../X", target_is_directory=True)
        (ws / "sub/.github").symlink_to("config", target_is_directory=True)
        answers[present] = _write_answer(ws, "sub/config/hooks/x.json")
    assert answers[True] == answers[False] != "allowed", answers


def test_the_write_rules_never_read_an_install_or_plugin_file_through_a_link_out(tmp_path: Path) -> None:
    """The rules read a nested install's answers file and manifest, and a plugin's manifest, to know what is
    protected: a committed ``plugin.json``, answers file or ``.codeact/manifest.json`` that is a link to an outside
    file made writes refused or allowed by whether that file exists and what it holds (its ``hooks`` key, its
    owned entries). Such a link is now never followed: the answers are the same for every outside state."""
    import json

    from codeact.layout import manifest

    answers = {}
    for present in (True, False):
        base = (tmp_path / str(present)).resolve()
        ws = base / "ws"
        (ws / "plug/skills").mkdir(parents=True)
        (ws / "inst/.codeact").mkdir(parents=True)
        (ws / "nested").mkdir()
        if present:
            (base / "X.json").write_text(json.dumps({"name": "p", "hooks": "skills"}))
            stamped = manifest("repo", {})
            stamped["owned"] = [item for item in stamped["owned"] if "workflows" not in item]
            (base / "M.json").write_text(json.dumps(stamped))
            (base / "A.yml").write_text("_src_path: x\n")
        (ws / "plug/plugin.json").symlink_to("../../X.json")
        (ws / "inst/.copier-answers.codeact.yml").write_text("_src_path: x\n")
        (ws / "inst/.codeact/manifest.json").symlink_to("../../../M.json")
        (ws / "nested/.copier-answers.codeact.yml").symlink_to("../../A.yml")
        answers[present] = [_write_answer(ws, path) for path in (
            "plug/skills/a.md", "plug/hooks.json", "inst/.github/workflows/codeact-update.yml",
            "nested/.github/instructions/codeact.instructions.md")]
    assert answers[True] == answers[False], answers
    assert answers[True][1] != "allowed" and answers[True][2] != "allowed", answers  # the stricter reading


@pytest.mark.parametrize("target", ["../ws/config", "inner/../config", "hop", "/ABS/ws/config", "missing/../config"])
def test_a_protected_link_name_leading_inside_still_protects(tmp_path: Path, target: str) -> None:
    """The links the write rules follow inside the workspace (a chain, ``..`` through the root's own name, an
    absolute target under it, a missing part dropped by ``..`` as os.path.realpath drops it) still make
    config/hooks the hooks folder; a loop protects nothing and raises nothing."""
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / "config/hooks").mkdir(parents=True)
    (ws / "inner").mkdir()
    (ws / "hop").symlink_to("inner/../hop2", target_is_directory=True)
    (ws / "hop2").symlink_to("config", target_is_directory=True)
    (ws / ".github").symlink_to(target.replace("/ABS", str(base)), target_is_directory=True)
    assert _write_answer(ws, "config/hooks/x.json") != "allowed"
    (ws / ".github").unlink()
    (ws / ".github").symlink_to(".github", target_is_directory=True)  # a loop: where the kernel leads nowhere
    assert _write_answer(ws, "config/hooks/x.json") == "allowed"


# ------------------------------------------------------------ a listed path that reads back as another file
def _real_and_decoy(tmp_path: Path, decoy: str) -> tuple[Path, Path]:
    """``tmp_path`` resolved and ``ws`` in it: the folder ``"a`` holding ``b"`` (``REAL``) and, at the root, the
    file ``decoy`` (``DECOY``) whose name a listed ``"a/b"`` may read back as."""
    base = tmp_path.resolve()
    ws = base / "ws"
    (ws / '"a').mkdir(parents=True)
    (ws / '"a' / 'b"').write_text("REAL\n")
    (ws / decoy).write_text("DECOY\n")
    return base, ws


def test_a_path_the_file_idioms_list_reads_back_as_that_file(tmp_path: Path) -> None:
    """The idioms quote each listed NAME alone (codeact.core.pathnames.quote): a folder ``"a`` and its file ``b"``
    need no quoting one by one, so os.walk, Path.rglob and iterdir give ``"a/b"``. Read back, that path is
    unquoted whole: ``_rejoined`` glues ``"a`` and ``b"`` with the ``\\`` pathlib would have eaten, and
    ``"a\\b"`` is the quoted form of ``a<backspace>`` -- another file at the root. A repository that commits both
    makes the program read (and edit) a different file than the one it listed (inside the workspace only)."""
    base, ws = _real_and_decoy(tmp_path, "a\x08")
    code = ("import os\nfrom pathlib import Path\n"
            "for top, dirs, files in os.walk('\"a'):\n"
            "    for f in files:\n"
            "        print(repr(os.path.join(top, f)), repr(open(os.path.join(top, f)).read()))\n"
            "for p in Path('\"a').iterdir():\n"
            "    print(repr(str(p)), repr(p.read_text()))\n")
    out = _run(ws, base / "home", code)
    assert "DECOY" not in out and out.count("REAL") == 2, out


def test_a_path_pathlib_made_ambiguous_is_refused_rather_than_read_as_another_file(tmp_path: Path) -> None:
    """``Path('"a').iterdir()`` joins the raw ``"a`` to the quoted ``"b\\""`` and the sandbox's pathlib eats the
    ``\\``: ``"a/"b/""`` is also the quoted name ``a"b"`` (its ``\\`` eaten). With both files committed the
    program is told the path is ambiguous, and never handed the other file's contents."""
    base, ws = _real_and_decoy(tmp_path, 'a"b"')
    code = ("from pathlib import Path\nfor p in Path('\"a').iterdir():\n"
            "    try:\n        print(repr(p.read_text()))\n    except Exception as exc:\n"
            "        print(type(exc).__name__, exc)\n")
    out = _run(ws, base / "home", code)
    assert "DECOY" not in out and "both in the workspace" in out, out


# ------------------------------------------------------------ sql under a folder swapped for a link
def test_sql_never_writes_outside_while_a_folder_is_swapped_for_a_link(ctx, fixture_workspace: Path,
                                                                       tmp_path: Path) -> None:
    """create/edit walk to the file with O_NOFOLLOW (atomic.slot); sql resolved ``db`` to a string
    (resolve_for_write) and sqlite3.connect opened that string by path afterwards. A host process exchanging ``sub``
    with a link to an outside folder (renameat2, in a loop, as the round-5 tests do) made sql create and write
    databases outside the workspace. SQLite opens by path whatever it is given (it expands even
    ``/proc/self/fd/N/x.db`` to the folder's path), so it now runs in a thread Landlock confines to the folder the
    walk opened."""
    from test_edit_safety import _can_exchange, _swappable, _swapping

    from codeact.tools import confine, sql

    if not _can_exchange(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    if not confine.can_confine_threads():
        pytest.skip("no Landlock here: SQLite runs unconfined (docs/security.md)")
    outside = tmp_path / "outside"
    sub, link = _swappable(fixture_workspace, outside, {}, {})
    n = 0
    with _swapping(sub, link, "4") as swapper:
        while swapper.poll() is None:
            n += 1
            try:
                sql.sql(ctx, query="CREATE TABLE t(x); INSERT INTO t VALUES (1)", db=f"sub/n{n}.db")
            except Exception:  # refused or failed: fine, as long as nothing lands outside
                continue
    assert sorted(p.name for p in outside.iterdir()) == [], f"written outside in {n} calls"


def test_sql_refuses_a_database_or_journal_with_another_hard_link(ctx, fixture_workspace: Path,
                                                                 tmp_path: Path) -> None:
    """A hard link inside the workspace to an outside file names that file: SQLite would write to it (the database,
    or a leftover journal it rolls back and rewrites). sql refuses both, clearly, and the outside file is unchanged."""
    from codeact.errors import PolicyError
    from codeact.tools import sql

    outside = tmp_path / "outside.db"
    import sqlite3

    with sqlite3.connect(outside) as conn:
        conn.execute("CREATE TABLE t(x)")
    conn.close()
    before = outside.read_bytes()
    try:
        os.link(outside, fixture_workspace / "linked.db")
    except OSError:
        pytest.skip("no hard links here")
    with pytest.raises(PolicyError, match="linked.db has 2 hard links"):
        sql.sql(ctx, query="INSERT INTO t VALUES (1)", db="linked.db")
    os.link(outside, fixture_workspace / "own.db-journal")
    with pytest.raises(PolicyError, match="own.db-journal has 3 hard links"):
        sql.sql(ctx, query="CREATE TABLE t(x)", db="own.db")
    assert outside.read_bytes() == before
    assert sql.sql(ctx, query="CREATE TABLE t(x); INSERT INTO t VALUES (2); SELECT x FROM t", db="mine.db") == [{"x": 2}]
