"""`dialeval metrics`: its help lists the tools, every tool reads files the same way, and
usage mistakes end as argparse's do (the usage line, exit 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.metrics_cli import METRICS_TOOLS

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"


def test_help_lists_every_tool_and_each_is_registered(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["metrics", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    from dialeval.benchmarks import get_benchmark

    for name, arguments, _ in METRICS_TOOLS:
        assert f"dialeval metrics {name} {arguments}" in out
        assert get_benchmark(name.split("-")[0]).metrics_only is not None


def test_kgds_reads_its_data_file_from_data(capsys):
    code = main(["metrics", "kgds", "--predictions", str(FIXTURES / "kgds_demo_predictions.jsonl"),
                 "--data", str(FIXTURES / "kgds_demo.json")])
    assert code == 0
    assert "| 0 | 100.00 | 100.00 | 100.00 | 1 | 0 |" in capsys.readouterr().out


def test_kgds_without_its_data_file_says_which_flag_is_missing(capsys):
    assert main(["metrics", "kgds", "--predictions", str(FIXTURES / "kgds_demo_predictions.jsonl")]) == 2
    assert "--data KGDS.json" in capsys.readouterr().err


def test_mdseval_without_a_tool_names_its_tools(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["metrics", "mdseval", "--data", str(FIXTURES / "mdseval_demo.json")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "usage: dialeval metrics" in err
    assert "mdseval-agreement, mdseval-meki, mdseval-select" in err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["metrics", "nonsense", "--data", "x.json"], "unknown tool 'nonsense'"),
        (["metrics", "vdact"], "vdact: give --predictions FILE..."),
        (["metrics", "mdseval-agreement"], "mdseval-agreement: give --data FILE..."),
    ],
)
def test_usage_mistakes_exit_2_with_the_usage_line(capsys, argv, says):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: dialeval metrics") and says in err


def test_a_pipe_in_a_file_name_stays_in_its_cell(tmp_path, capsys):
    predictions = tmp_path / "system|b.jsonl"
    shutil.copy(FIXTURES / "kgds_demo_predictions.jsonl", predictions)
    assert main(["metrics", "kgds", "--predictions", str(predictions), "--data", str(FIXTURES / "kgds_demo.json")]) == 0
    line = next(li for li in capsys.readouterr().out.splitlines() if "system" in li)
    assert "system\\|b.jsonl" in line
    assert line.replace("\\|", "").count("|") == 8  # seven columns, none added by the name
