"""docs/extending.md's plugin example is code that runs: its Python blocks are written as the
page says (``my_package/verifiers.py``, ``my_package/dialeval_plugins.py``), then used the
way the page says, so a moved module or a renamed function breaks this test, not a reader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.config import load_config
from dialeval.evaluation import run

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
BLOCK = re.compile(r"```(\w+)\n(.*?)\n```", re.DOTALL)

# the page leaves the template to the reader; the example's render() fills these variables
STRICT_TEMPLATE = """<<system>>
Grade the answer inside <answer> against the reference inside <reference>, 1-5; give 5 only
when every detail of the reference is there. Reply with JSON: {"rationale": ..., "score": ...}.
<<user>>
<question>$question</question>
<reference>$reference</reference>
<answer>$answer</answer>
"""


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


@pytest.fixture(scope="module")
def my_package(tmp_path_factory):
    """``my_package`` as the page builds it, on ``sys.path`` for this module's tests."""
    import sys

    root = tmp_path_factory.mktemp("plugin")
    verifiers, plugins = _blocks("python")[:2]
    package = root / "my_package"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "verifiers.py").write_text(verifiers + "\n")
    (package / "dialeval_plugins.py").write_text(plugins + "\n")
    (package / "strict_judge.txt").write_text(STRICT_TEMPLATE)
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


def test_the_pages_imports_all_resolve():
    """Every ``from dialeval... import ...`` line of the page names a module and names that exist."""
    import importlib

    lines = [line for body in _blocks("python") for line in body.splitlines() if line.startswith("from dialeval")]
    assert lines, "the page shows no dialeval import"
    for line in lines:
        module, names = re.match(r"from (\S+) import (.+)", line).groups()  # type: ignore[union-attr]
        imported = importlib.import_module(module)
        for name in names.split("#")[0].split(","):
            assert hasattr(imported, name.strip()), f"{line}: {name.strip()} is not in {module}"


def test_the_agent_by_import_path_grades_and_shows_in_the_role_table(my_package, tmp_path):
    config = load_config(None, model="dry-run", agents={"judge": "my_package.verifiers:strict_judge"},
                         output_dir=str(tmp_path / "runs"), cache_path=None)
    result = run("answers", DATA, config, progress=False)
    assert {c["agent"] for r in result.records for c in r["calls"]} == {"my_package.strict_judge"}
    role_row = next(line for line in result.report_path.read_text().splitlines() if line.startswith("| judge |"))
    assert role_row == "| judge | `my_package.verifiers:strict_judge` | `dry-run` |"  # not "no call recorded"


def test_the_runs_index_shows_which_agent_and_template_a_run_swapped_in(my_package, tmp_path):
    from dialeval.report.viewer import write_site

    template = my_package / "my_package" / "strict_judge.txt"
    for name, overrides in (("packaged", {}), ("swapped", {"agents": {"judge": "my_package.verifiers:strict_judge"},
                                                           "templates": {"judge": str(template)}})):
        config = load_config(None, model="dry-run", output_dir=str(tmp_path / "runs"), cache_path=None, run_id=name, **overrides)
        run("answers", DATA, config, progress=False)
    write_site(tmp_path / "runs")
    index = (tmp_path / "runs" / "index.html").read_text()
    rows = {name: index[index.index(f">{name}</a>"):].split("</tr>")[0] for name in ("packaged", "swapped")}
    assert "agent judge=my_package.verifiers:strict_judge" in rows["swapped"] and "template judge=strict_judge.txt" in rows["swapped"]
    assert 'class="muted swap"' not in rows["packaged"]


def test_the_plugin_module_registers_the_agent_and_the_words_benchmark(my_package, tmp_path):
    words_yaml, answers_yaml = [b for b in _blocks("yaml") if b.startswith("plugins:")]
    where = f"\noutput_dir: {tmp_path / 'runs'}\ncache_path: null\n"
    (tmp_path / "words.yaml").write_text(words_yaml + where)
    (tmp_path / "answers.yaml").write_text(answers_yaml + where)
    texts = tmp_path / "texts.jsonl"
    texts.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": "four five"}\n')
    assert main(["run", "words", "--data", str(texts), "--config", str(tmp_path / "words.yaml"), "--no-progress"]) == 0
    metrics = json.loads(next((tmp_path / "runs").glob("words-*/metrics.json")).read_text())
    assert metrics["total_words"] == 5
    assert main(["run", "answers", "--data", str(DATA), "--config", str(tmp_path / "answers.yaml"), "--model", "dry-run",
                 "--no-progress"]) == 0
    records = [json.loads(line) for line in next((tmp_path / "runs").glob("answers-*/results.jsonl")).read_text().splitlines()]
    assert {c["agent"] for r in records for c in r["result"]["calls"]} == {"my_package.strict_judge"}


# sections 4 and 5: an importer and a trust probe of your own, each one block run as written

def example(section: str) -> str:
    """The Python block of the section whose heading starts with ``section``."""
    text = PAGE.read_text(encoding="utf-8").split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_importer_example_registers_a_format_that_import_and_the_dialogue_loader_read(tmp_path, monkeypatch):
    from dialeval.data.importers import importer_names
    from dialeval.errors import DataError

    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(example("4. An importer"), "docs/extending.md#4", "exec"), scope)
    assert "chatlog" in importer_names()
    (tmp_path / "bad.log").write_text("user: hi\nagent: hello\n", encoding="utf-8")
    with pytest.raises(DataError, match="chat 1"):
        scope["import_records"]("chatlog", tmp_path / "bad.log")


@pytest.mark.timeout(120)
def test_the_probe_example_builds_a_card_with_its_figure(tmp_path, monkeypatch, capsys):
    from dialeval.trust.probe_catalog import all_probes

    monkeypatch.chdir(tmp_path)
    exec(compile(example("5. A trust probe"), "docs/extending.md#5", "exec"), {})
    assert "halving" in all_probes()
    assert capsys.readouterr().out.startswith("halving: -")
    card = (tmp_path / "trust").glob("*/card.md")
    assert "halving: mean score change" in next(card).read_text(encoding="utf-8")


@pytest.mark.timeout(120)
def test_the_gate_figure_example_gates_a_run_on_its_own_figure(tmp_path, monkeypatch, capsys):
    from dialeval.gate.figure_catalog import all_figures
    from dialeval.gate.figures import run_figures
    from dialeval.report.results import read_run

    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(example("6. A gate figure"), "docs/extending.md#6", "exec"), scope)
    assert "<criterion>.low_share" in all_figures()
    figures = run_figures(read_run(scope["result"].run_dir))
    assert figures["score.low_share"] == 0.125 and figures["score (1-5).low_share"] == 0.125
    assert capsys.readouterr().out.startswith("gate 'score.low_share == 0' failed: score.low_share = 0.125")
    (tmp_path / "gates.yaml").write_text('rules:\n  - "score.low_share <= 0.2"\n')
    assert main(["gate", str(scope["result"].run_dir), "--rules", str(tmp_path / "gates.yaml")]) == 0


@pytest.mark.timeout(120)
def test_the_bot_kind_example_answers_from_its_program_and_a_spec_names_it(capsys):
    from dialeval import bots
    from dialeval.errors import ConfigError

    scope: dict = {}
    exec(compile(example("7. A bot kind"), "docs/extending.md#7", "exec"), scope)
    assert capsys.readouterr().out.strip() == "[{'role': 'assistant', 'content': 'You said: hello'}]"
    assert "command" in bots.KINDS and bots.describe(bots.parse({"command": ["my-bot"]})) == "command my-bot"
    with pytest.raises(ConfigError, match="'graph', 'command'; got keys"):
        bots.parse({"commands": ["my-bot"]})
    import asyncio
    import sys

    stuck = bots.load({"command": [sys.executable, "-c", "import time; time.sleep(60)"], "timeout": 1})
    record = asyncio.run(stuck.turn([{"role": "user", "content": "hi"}], "s1", "t1"))
    assert record["failure"].startswith("time-out") and record["seconds"] < 30
