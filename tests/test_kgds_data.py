"""KGDS data: the official format, predictions, and errors that name file, record and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.config import ConfigError
from dialeval.data.io import DataError
from dialeval.protocols.kgds.data import Prediction, load_kgds, load_predictions, paragraph_number
from dialeval.protocols.kgds.loading import load, parse_options

FIXTURE = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"


def test_fixture_loads_with_views_the_evaluation_uses():
    [sample] = load_kgds(FIXTURE)
    assert sample.id == "0"
    assert sample.supporting == {1, 2} and sample.nonsupporting == {3}
    facts = sample.scored_facts()
    assert [(f.fact_id, f.kind) for f in facts] == [("1.0", "key"), ("1.1", "key"), ("2.0", "key"), ("2.1", "key"), ("3.0", "nonsupporting")]
    assert "**Lena Ortiz**" in sample.CAO[0]  # clarified references are kept
    assert sample.paragraphs_without_facts() == []


def test_real_data_shapes(shared_data):
    samples = load_kgds(shared_data / "kgds" / "KGDS.json")
    assert len(samples) == 100
    assert sum(len(s.CAO) for s in samples) == 873  # paper, Appendix B
    assert sum(f.kind == "key" for s in samples for f in s.scored_facts()) == 1638
    assert sum(f.kind == "nonsupporting" for s in samples for f in s.scored_facts()) == 4996


def test_bad_sample_names_file_record_and_field(tmp_path):
    raw = json.loads(FIXTURE.read_text())
    raw[0]["BSP"][0]["paragraph_index"] = 9
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(DataError, match=r"bad\.json, record 1.*paragraph 9"):
        load_kgds(bad)
    del raw[0]["KGD"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(DataError, match="field 'KGD'"):
        load_kgds(bad)


def test_paragraph_labels_are_read_as_numbers():
    assert [paragraph_number(v) for v in (3, "3", "<Paragraph_3>", "P3")] == [3, 3, 3, 3]
    with pytest.raises(ValueError):
        paragraph_number("paragraphs 3 and 4")
    assert Prediction(sample=0, pattern="ebs", background=["<Paragraph_2>", 1]).background == [2, 1]


def test_predictions_are_checked(tmp_path):
    samples = load_kgds(FIXTURE)
    good = tmp_path / "p.jsonl"
    good.write_text('{"sample": 0, "pattern": "abs", "background": "The Herons won.", "opinion": "Person1 ..."}\n')
    assert load_predictions(good, samples)["0"][0].pattern == "abs"
    cases = {
        '{"sample": 4, "pattern": "ebs", "background": [1]}': "field 'sample'",
        '{"sample": 0, "pattern": "ebs", "background": "text"}': "list of paragraph indices",
        '{"sample": 0, "pattern": "abs", "background": [1]}': "non-empty text",
        '{"sample": 0, "pattern": "xbs", "background": [1]}': "field 'pattern'",
    }
    for line, message in cases.items():
        good.write_text(line + "\n")
        with pytest.raises(DataError, match=message):
            load_predictions(good, samples)
    good.write_text('{"sample": 0, "pattern": "ebs", "background": [1]}\n' * 2)
    with pytest.raises(DataError, match="a second prediction"):
        load_predictions(good, samples)


def test_options_are_validated():
    assert parse_options({}).patterns == ["ebs", "abs"]
    with pytest.raises(ConfigError, match="reflection_rounds"):
        parse_options({"reflection_rounds": -1})
    with pytest.raises(ConfigError, match="patternz"):
        parse_options({"patternz": ["ebs"]})


def test_items_carry_predictions(tmp_path):
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"sample": 0, "pattern": "ebs", "background": [1, 2]}]))
    [item] = load(FIXTURE, {"predictions": str(preds)})
    assert item.predictions[0]["background"] == [1, 2]
    [item] = load(FIXTURE, {})
    assert item.predictions is None
