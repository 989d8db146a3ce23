"""Gate figures are registered in one place (gate/figure_registry.py): the built-in ones are
those docs/gate.md lists, and a --plugin module adds its own to `dialeval gate`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.gate.figure_catalog import all_figures, measured_by_dry_run
from dialeval.testing.openai_server import OpenAIStub
from tests.gate_helpers import grade_by_answer, run_answers

GATE_PAGE = Path(__file__).resolve().parents[1] / "docs" / "gate.md"

PLUGIN = '''
from dialeval.gate.figure_registry import register_figure


@register_figure("judged.answers", "items that finished with a readable score")
def judged(run):
    return float(sum(1 for item in run.items if item.status == "ok" and item.scores))


@register_figure("latency.p99", "never measured by this plugin")
def never(run):
    return None
'''


def test_every_built_in_figure_is_in_the_gates_table():
    table = GATE_PAGE.read_text(encoding="utf-8").split("### Rules", 1)[1].split("\n\n", 3)[2]
    named = set(re.findall(r"`([^`]+)`", table))
    built_in = {label: figure for label, figure in all_figures().items()  # not those other tests' plugins registered
                if (figure.read or figure.of_scores).__module__ == "dialeval.gate.builtin_figures"}
    assert {"cost.usd", "failures.share", "<criterion>.mean"} <= set(built_in)
    for label, figure in built_in.items():
        short = f".{figure.name}" if figure.of_scores else label
        assert label in named or short in named, f"docs/gate.md's figure table does not name {label}"


def test_a_dry_run_measures_its_cost_and_calls_only():
    assert all(measured_by_dry_run(f) for f in ("cost.usd", "calls", "items", "run.usage.input_tokens"))
    assert not any(measured_by_dry_run(f) for f in ("score.mean", "failures.share", "unparsed.share"))


@pytest.mark.timeout(120)
def test_a_plugin_module_adds_a_figure_the_gate_reads(tmp_path, monkeypatch, capsys):
    (tmp_path / "team_figures_48.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    with OpenAIStub(respond=grade_by_answer) as server:
        run = run_answers(server, tmp_path, "run", {"a": 4, "b": 5, "c": 3})
    rules = tmp_path / "gates.yaml"
    rules.write_text('rules:\n  - "judged.answers >= 3"\n')
    assert main(["gate", str(run), "--rules", str(rules), "--plugin", "team_figures_48"]) == 0
    assert "PASS  judged.answers >= 3: judged.answers = 3" in capsys.readouterr().out
    rules.write_text('rules:\n  - "latency.p99 <= 2"\n')  # a figure the run does not have: bad input, not a pass
    assert main(["gate", str(run), "--rules", str(rules), "--plugin", "team_figures_48"]) == 2
    assert "has no figure 'latency.p99'" in capsys.readouterr().err
    assert main(["gate", str(run), "--rules", str(rules), "--plugin", "no_such_module_48"]) == 2
    assert "cannot import plugin module 'no_such_module_48'" in capsys.readouterr().err
    sys.modules.pop("team_figures_48", None)
