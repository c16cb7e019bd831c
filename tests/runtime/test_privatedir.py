"""One rule for every private per-user folder (codeact.privatedir): made 0700, refused when it is a link, not a
folder or another user's; and the folders that use it (sessions, provider state, output store, write locks)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codeact.core import sessions
from codeact.errors import CodeactError, PrivateFolderError
from codeact.privatedir import ensure_private_dir
from codeact.providers.state import open_state
from codeact.tools import atomic

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o277])
def test_a_missing_folder_is_made_0700_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        ensure_private_dir(tmp_path / "a" / "b", parents=True)
    finally:
        os.umask(old)
    assert mode(tmp_path / "a" / "b") == 0o700


def test_without_parents_a_missing_parent_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PrivateFolderError, match=r"cannot create the server folder .*/a/b: No such file"):
        ensure_private_dir(tmp_path / "a" / "b", what="server folder")
    assert not (tmp_path / "a").exists()


def test_the_error_is_an_oserror_and_a_codeact_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(PrivateFolderError) as refused:
        ensure_private_dir(tmp_path / "file")
    assert isinstance(refused.value, OSError) and isinstance(refused.value, CodeactError)
    assert str(refused.value).endswith("is not a private folder of this user: it is not a folder (a link?)")


def test_a_link_to_a_private_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with pytest.raises(PrivateFolderError, match="link.* is not a private folder of this user: .*a link"):
        ensure_private_dir(tmp_path / "link")


def test_an_open_folder_is_tightened_or_refused(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    with pytest.raises(PrivateFolderError, match=r"others may enter it \(mode 755\); remove it"):
        ensure_private_dir(folder, tighten=False)
    assert mode(folder) == 0o755, "a refusal changes nothing"
    ensure_private_dir(folder)
    assert mode(folder) == 0o700
    folder.chmod(0o500)  # ours, but not even writable by us: made 0700 too
    ensure_private_dir(folder)
    assert mode(folder) == 0o700


def test_a_missing_folder_without_create_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PrivateFolderError, match="no folder .*: No such file"):
        ensure_private_dir(tmp_path / "none", create=False)
    assert not (tmp_path / "none").exists()


@pytest.fixture
def foreign(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make a folder another user's: chown as root, else pretend to be another user."""
    def give_away(path: Path) -> None:
        if os.geteuid() == 0:
            os.chown(path, 4242, 4242)
        else:
            me = os.geteuid()
            monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    return give_away


def test_another_users_folder_is_refused_and_left_alone(tmp_path: Path, foreign: Callable[[Path], None]) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    folder.chmod(0o755)
    foreign(folder)
    with pytest.raises(PrivateFolderError, match="belongs to another user"):
        ensure_private_dir(folder)
    assert mode(folder) == 0o755


def test_the_thin_client_can_import_it_cheaply() -> None:
    """The launcher's thin client runs under ``python -S``: the helper must not pull in typing or the errors."""
    code = ("import sys; import codeact.privatedir; "
            "print(sorted(m for m in ('typing', 'codeact.errors', 'pathlib', 're') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=RUNTIME, capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


# ------------------------------------------------------------------------------------- the folders that use it
def test_the_provider_state_refuses_a_linked_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real, target_is_directory=True)
    with pytest.raises(PrivateFolderError, match="provider state folder .*a link"):
        open_state(tmp_path / "state")
    assert list(real.iterdir()) == [], "no token written through the link"


def test_the_provider_state_tightens_an_open_folder(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(0o755)
    open_state(folder)
    assert mode(folder) == 0o700


def test_a_session_is_not_kept_in_a_linked_folder_and_says_so(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "state" / "codeact").mkdir(parents=True)
    (tmp_path / "state" / "codeact" / "sessions").symlink_to(elsewhere, target_is_directory=True)
    note = sessions.save(tmp_path, "work", {"x": 1}, env)
    assert note.startswith("session 'work': not kept: the sessions folder ") and "a link" in note
    assert list(elsewhere.iterdir()) == []


def test_sessions_live_in_private_folders(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    assert sessions.save(tmp_path, "work", {"x": 1}, env) == ""
    path = sessions.state_file(tmp_path, "work", env)
    assert mode(path.parent) == mode(path.parent.parent) == 0o700 and mode(path) == 0o600
    assert sessions.load(tmp_path, "work", env) == {"x": 1}


def test_a_session_in_another_users_folder_is_not_loaded(tmp_path: Path, foreign: Callable[[Path], None]) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    assert sessions.save(tmp_path, "work", {"x": 1}, env) == ""
    foreign(sessions.state_file(tmp_path, "work", env).parent)
    assert sessions.load(tmp_path, "work", env) == {}
    assert "belongs to another user" in sessions.save(tmp_path, "work", {"x": 2}, env)


def linked_cache(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A cache folder whose ``codeact/writes`` is a link to a private folder: (the cache, the link's target)."""
    cache, target = tmp_path / name, tmp_path / f"{name}-target"
    (cache / "codeact").mkdir(parents=True)
    target.mkdir(mode=0o700)
    (cache / "codeact" / "writes").symlink_to(target, target_is_directory=True)
    return cache, target


def test_write_locks_skip_a_linked_cache_folder_and_name_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    cache, target = linked_cache(tmp_path, "cache")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    folder = atomic.private_dir()
    assert folder == tmp_path / "tmp" / f"codeact-{os.geteuid()}" / "writes"
    for path in (folder.parent, folder, folder / "locks", folder / "pending"):
        assert mode(path) == 0o700
    assert list(target.iterdir()) == []
    other, _ = linked_cache(tmp_path, "cache2")  # both places unusable: the error names both and why
    monkeypatch.setenv("XDG_CACHE_HOME", str(other))
    folder.rename(tmp_path / "moved")
    folder.write_text("not a folder")
    with pytest.raises(atomic.ToolError, match=r"cannot make a private folder for write locks \(the write-lock "
                                               r"folder .*cache2/codeact/writes is not a private folder of this user: "
                                               r"it is not a folder \(a link\?\); the write-lock folder .*tmp/"):
        atomic.private_dir()
