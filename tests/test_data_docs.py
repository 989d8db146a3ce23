"""docs/data.md's examples are real data: each is written to a folder and loaded with
its benchmark's own reader, so the page cannot drift from what the loaders accept.

The page marks them with HTML comments a reader never sees:
``<!-- example NAME: PATH -->`` before a fenced block (the file's content),
``<!-- image NAME: PATH -->`` (a picture the example names; a tiny PNG is made) and
``<!-- load NAME: PATH OPTIONS -->`` (load PATH with those run options, from NAME's folder).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from dialeval.benchmarks import KNOWN, get_benchmark

PAGE = Path(__file__).resolve().parents[1] / "docs" / "data.md"
EXAMPLE = re.compile(r"<!-- example (\w+): (\S+) -->\n```\w*\n(.*?)\n```", re.DOTALL)
IMAGE = re.compile(r"<!-- image (\w+): (\S+) -->")
LOAD = re.compile(r"<!-- load (\w+): (\S+) (\{.*?\}) -->")


def _loads() -> list[tuple[str, str, dict]]:
    return [(name, path, json.loads(options)) for name, path, options in LOAD.findall(PAGE.read_text(encoding="utf-8"))]


def test_every_benchmark_has_an_example_that_is_loaded():
    assert {name for name, _, _ in _loads()} == set(KNOWN)


@pytest.mark.parametrize("name, path, options", _loads(), ids=[name for name, _, _ in _loads()])
def test_the_example_loads_with_the_benchmarks_reader(tmp_path, monkeypatch, name, path, options):
    text = PAGE.read_text(encoding="utf-8")
    folder = tmp_path / name
    for example, file, content in EXAMPLE.findall(text):
        if example == name:
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / file).write_text(content + "\n", encoding="utf-8")
    for example, file in IMAGE.findall(text):
        if example == name:
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (4, 4), "white").save(folder / file)
    monkeypatch.chdir(folder)  # option paths are relative to the example's folder
    items = get_benchmark(name).load(folder / path, options)
    assert items, f"{name}: the example holds no item"
    graph_input = get_benchmark(name).to_input(items[0], options)
    assert graph_input  # what a run would send to the graph
