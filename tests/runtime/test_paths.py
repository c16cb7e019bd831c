"""The XDG base folders (codeact.paths): one rule for every variable, as the XDG Base Directory specification says —
an absolute ``$XDG_*_HOME`` is used as given; an empty, unset or relative one is invalid and ignored (the default
below home stands)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codeact import paths

KINDS = sorted(paths.XDG_DEFAULTS)


def test_every_variable_paths_reads_is_covered() -> None:
    assert {variable for variable, _ in paths.XDG_DEFAULTS.values()} == {
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"}


@pytest.mark.parametrize("kind", KINDS)
def test_an_absolute_value_is_used_as_given(tmp_path: Path, kind: str) -> None:
    variable, _ = paths.XDG_DEFAULTS[kind]
    assert paths.xdg_dir(kind, {variable: str(tmp_path / "x" / ".." / "y"), "HOME": "/home/u"}) == \
        tmp_path / "x" / ".." / "y"


@pytest.mark.parametrize("value", ["", "relative", "./here", "~/cfg"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_or_relative_value_is_ignored(kind: str, value: str) -> None:
    variable, default = paths.XDG_DEFAULTS[kind]
    assert paths.xdg_dir(kind, {variable: value, "HOME": "/home/u"}) == Path("/home/u") / default
    assert paths.xdg_dir(kind, {"HOME": "/home/u"}) == Path("/home/u") / default


@pytest.mark.parametrize("value", ["", "relative", "./here", "~/cfg"])
def test_codeacts_config_folder_follows_the_same_rule(value: str) -> None:
    """It used to take a relative ``$XDG_CONFIG_HOME`` (and expand ``~``), unlike every other XDG folder."""
    assert paths.user_config_dir({"XDG_CONFIG_HOME": value, "HOME": "/home/u"}) == Path("/home/u/.config/codeact")
    assert paths.user_config_dir({"XDG_CONFIG_HOME": "/etc/xdg-u", "HOME": "/home/u"}) == Path("/etc/xdg-u/codeact")


def test_codeact_config_dir_overrides_xdg() -> None:
    env = {"CODEACT_CONFIG_DIR": "/opt/mine", "XDG_CONFIG_HOME": "/etc/xdg-u", "HOME": "/home/u"}
    assert paths.user_config_dir(env) == Path("/opt/mine")


@pytest.mark.parametrize("value", ["", "relative"])
def test_codeacts_cache_folder_follows_the_same_rule(value: str) -> None:
    assert paths.codeact_cache_dir({"XDG_CACHE_HOME": value, "HOME": "/home/u"}) == Path("/home/u/.cache/codeact")
