"""The command at the head of each example config runs from the repository root as written:
every file it names (``--data``, ``--config``) is there (the MMRC demo's once named
``dialeval/fixtures/...`` and missed ``src/``)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted([*ROOT.glob("configs/*.yaml"), *ROOT.glob("src/dialeval/fixtures/*.yaml")])
COMMAND = re.compile(r"^#\s+(dialeval \w+ .*)$", re.M)


def _commands() -> list[tuple[str, str]]:
    return [(path.name, command) for path in CONFIGS for command in COMMAND.findall(path.read_text(encoding="utf-8"))]


def test_the_example_configs_carry_commands():
    assert {"mmrc_smollm2.yaml", "kgds-demo.yaml"} <= {name for name, _ in _commands()}


@pytest.mark.parametrize(("name", "command"), _commands())
def test_every_file_a_header_command_names_exists_from_the_repository_root(name, command):
    words = shlex.split(command)
    named = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--data", "--config")]
    assert named, f"{name}: {command} names no --data or --config"
    for path in named:
        assert (ROOT / path).is_file(), f"{name}: `{command}` names {path}, which is not there from the repository root"
