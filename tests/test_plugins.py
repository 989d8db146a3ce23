"""Users' own agents and benchmarks: import paths, `plugins:` modules, `dialeval.plugins` entry points."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.cli import main
from dialeval.config import ConfigError, load_config
from dialeval.plugins import reset_entry_points
from dialeval.evaluation import run
from tests.plugin_helpers import install_plugin

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"

# an agent factory as a user writes it: no model, it grades by answer length
AGENT_MODULE = '''
from dialeval.agents.base import AgentCall


def {name}():
    """Scores 5 when the answer is at least as long as the reference, else 1."""

    async def judge(state, context):
        score = 5 if len(state["answer"]) >= len(state["reference"]) else 1
        call = AgentCall(agent="{name}", status="ok", value={{"rationale": "by length", "score": score}}, raw="", attempts=1)
        return {{"grade": call.model_dump()}}

    return judge
'''

# a plugin module that registers a whole benchmark: words per text, no model at all
BENCHMARK_MODULE = '''
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.data.io import read_records


class Text(TypedDict):
    id: str
    text: str
    words: int


def count(state):
    return {{"words": len(state["text"].split())}}


def graph():
    builder = StateGraph(Text)
    builder.add_node("count", count)
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    return builder.compile()


class Item(dict):
    @property
    def id(self):
        return self["id"]


register_benchmark(Benchmark(
    name="{name}", title="Words per text", paper="(plugin)",
    load=lambda path, options: [Item(r) for r in read_records(path)],
    graph=graph,
    to_input=lambda item, options: dict(item),
    to_record=lambda item, state: {{"id": item.id, "words": state["words"], "calls": []}},
    aggregate=lambda records, options: {{"total_words": sum(r["words"] for r in records)}},
    score_dimensions=lambda records: {{}},
    tables=lambda metrics: f"total words: {{metrics['total_words']}}",
    item_scores=lambda records: {{"words": {{r["id"]: r["words"] for r in records}}}},
))
'''


def _module(folder: Path, name: str, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


def test_an_agent_factory_named_by_import_path_grades_the_run(tmp_path, monkeypatch):
    _module(tmp_path / "src", "my_verifiers_a", AGENT_MODULE.format(name="length_judge"))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    config = load_config(
        None, model="dry-run", agents={"judge": "my_verifiers_a:length_judge"}, output_dir=str(tmp_path / "runs"), cache_path=None
    )
    result = run("answers", DATA, config, progress=False)
    grades = [r["calls"][0] for r in result.records]
    assert {g["agent"] for g in grades} == {"length_judge"}
    assert sorted(r["score"] for r in result.records) == sorted(
        5 if len(json.loads(line)["answer"]) >= len(json.loads(line)["reference"]) else 1
        for line in DATA.read_text().splitlines()
    )


def test_a_plugin_module_in_the_config_registers_a_whole_benchmark(tmp_path, monkeypatch):
    _module(tmp_path / "src", "my_plugin_b", BENCHMARK_MODULE.format(name="words_b"))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    data = tmp_path / "texts.jsonl"
    data.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": "four five"}\n')
    config_file = tmp_path / "run.yaml"
    config_file.write_text(f"plugins: [my_plugin_b]\noutput_dir: {tmp_path / 'runs'}\ncache_path: null\n")
    assert main(["run", "words_b", "--data", str(data), "--config", str(config_file), "--no-progress"]) == 0
    metrics = json.loads(next((tmp_path / "runs").glob("words_b-*/metrics.json")).read_text())
    assert metrics["total_words"] == 5


def test_an_installed_package_is_found_through_the_entry_point_group(tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_plugin(site, "my_plugin_c", textwrap.dedent(BENCHMARK_MODULE.format(name="words_c")), "words")
    monkeypatch.syspath_prepend(str(site))
    reset_entry_points()
    try:
        assert get_benchmark("words_c").title == "Words per text"
    finally:
        reset_entry_points()


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"agents": {"judge": "no_such_package.verifiers:strict"}}, "no_such_package.verifiers"),
        ({"agents": {"judge": "json:no_such_factory"}}, "json:no_such_factory"),
        ({"plugins": ["no_such_plugin_module"]}, "no_such_plugin_module"),
    ],
)
def test_a_bad_import_path_stops_before_the_run_and_is_named(overrides, named, tmp_path):
    config = load_config(None, model="dry-run", output_dir=str(tmp_path / "runs"), cache_path=None, **overrides)  # reading imports nothing
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        run("answers", DATA, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_reading_a_config_imports_no_user_code(tmp_path, monkeypatch):
    """Loading a config only validates it: the plugin module is imported when a run starts."""
    _module(tmp_path / "src", "my_plugin_d", "import pathlib\npathlib.Path(__file__).with_name('imported').touch()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    load_config(None, plugins=["my_plugin_d"], agents={"judge": "my_plugin_d:nothing"})
    assert not (tmp_path / "src" / "imported").exists()


def test_the_cli_exits_2_naming_the_import_path(tmp_path, capsys):
    config_file = tmp_path / "run.yaml"
    config_file.write_text("agents: {judge: 'my_typo.verifiers:strict_verifier'}\n")
    assert main(["run", "answers", "--data", str(DATA), "--config", str(config_file), "--model", "dry-run"]) == 2
    assert "my_typo.verifiers" in capsys.readouterr().err
