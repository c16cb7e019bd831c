"""One place for each enumeration: the interview's choices and validators, and the CLI's, come from the runtime."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from extensions import codeact as ext

COPIER_YML = Path(__file__).resolve().parents[2] / "copier.yml"


@pytest.mark.parametrize("question", ["tools", "backend", "enforcement"])
def test_the_interviews_choices_are_the_runtimes(question: str) -> None:
    config = yaml.safe_load(COPIER_YML.read_text())
    assert tuple(config[question]["choices"].values()) == ext.valid_choices(question)
    assert "choice_error" in config[question]["validator"]


def test_choice_error_names_the_valid_values() -> None:
    assert ext.choice_error("backend", "monty") == ""
    assert ext.choice_error("backend", "qemu") == "unknown backend 'qemu'; valid: auto, monty, hyperlight"
    assert ext.choice_error("tools", []) == "choose at least one tool"
    assert "unknown tools 'rm'" in ext.choice_error("tools", ["view", "rm"])
    assert ext.choice_error("tools", ["previous_output"]).startswith("unknown tools")  # always offered, never asked


def test_the_cli_offers_the_runtimes_backends() -> None:
    from codeact import cli
    from codeact.core.config import BACKENDS

    parser = cli.build_parser("run")
    run = next(a for a in parser._subparsers._group_actions[0].choices["run"]._actions  # type: ignore[union-attr]
               if "--backend" in a.option_strings)
    assert tuple(run.choices) == BACKENDS
