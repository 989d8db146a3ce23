"""Rubric mistakes people make: fractional range bounds, typos, look-alike names, pasted lists."""

from __future__ import annotations

import json

import pytest

from dialeval.errors import ConfigError
from dialeval.conversation.rubric import MAX_CRITERIA, parse_rubric


def criterion(name="tone", **fields):
    return {"name": name, "description": "Polite?", "scale": [1, 5], **fields}


@pytest.mark.parametrize(
    "criteria, message",
    [
        ([criterion(scale=[1.5, 5])], "field 'scale': an integer range needs whole-number bounds, got [1.5, 5]"),
        ([criterion(scale=["good", 2.5, "bad"])], "field 'scale': labels are words"),
        ([{"name": "tone", "descripton": "Polite?", "scale": [1, 5]}], "field 'descripton': unknown key; valid: name, level, "
                                                                      "description, scale, examples, needs, match, kind (did you mean 'description'?)"),
        ([criterion(exmaples=["a"])], "(did you mean 'examples'?)"),
        ([criterion("Tone"), criterion("tone ")], "criterion 'tone ', field 'name': differs from 'Tone' only by case or spacing"),
        ([criterion("overall"), criterion("overall")], "criterion 'overall', field 'name': used twice among the turn-level criteria"),
        ([criterion(f"c{i}") for i in range(MAX_CRITERIA + 1)], f"{MAX_CRITERIA + 1} criteria; at most {MAX_CRITERIA}"),
    ],
)
def test_rubric_mistakes_are_refused_with_the_fix(criteria, message):
    with pytest.raises(ConfigError) as err:
        parse_rubric({"criteria": criteria}, "my.yaml")
    assert "rubric my.yaml" in str(err.value) and message in str(err.value)


def test_a_misspelt_top_level_field_gets_a_suggestion():
    with pytest.raises(ConfigError, match=r"unknown top-level field 'critera' \(only 'criteria'\) \(did you mean 'criteria'\?\)"):
        parse_rubric({"criteria": [criterion()], "critera": []}, "my.yaml")


def test_a_name_may_be_used_once_per_level_and_whole_number_floats_are_a_range():
    rubric = parse_rubric({"criteria": [criterion("overall", scale=[1.0, 5.0]), criterion("overall", level="conversation", scale=[0, 2])]}, "r")
    assert rubric.get("overall", "conversation").scale.bounds == (0.0, 2.0)
    assert rubric.get("overall", "turn").scale.bounds == (1.0, 5.0)


def test_labels_read_as_numbers_and_back():
    scale = parse_rubric({"criteria": [criterion(scale=["yes", "partly", "no"])]}, "r").criteria[0].scale
    assert [scale.read_label(v) for v in ("Yes", "partly", "no", "maybe")] == [3.0, 2.0, 1.0, None]
    assert [scale.label_of(s) for s in (3.0, 1.0, 2.5)] == ["yes", "no", None]
    assert scale.bounds == (1.0, 3.0)
    yes_no = parse_rubric({"criteria": [criterion(scale=[True, False])]}, "r").criteria[0].scale  # YAML's yes/no
    assert [yes_no.read_label(v) for v in (True, False, "YES")] == [2.0, 1.0, 2.0]


def test_a_misspelt_criteria_list_gets_a_suggestion():
    with pytest.raises(ConfigError, match=r"expected a mapping with a 'criteria' list \(did you mean 'criteria'\?\)"):
        parse_rubric({"critera": [criterion()]}, "my.yaml")


def test_a_conversation_may_carry_its_rubric_itself_and_a_bad_one_stops_the_load(tmp_path):
    from dialeval.benchmarks import get_benchmark
    from dialeval.errors import DataError

    own = {"criteria": [{"name": "solved", "level": "conversation", "description": "the problem is solved", "scale": ["yes", "no"]}]}
    record = {"id": "c1", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
              "metadata": {"rubric": own}}
    data = tmp_path / "chats.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    [conversation] = get_benchmark("dialogue").load(data, {})
    assert conversation.metadata["rubric"] == own

    bad = {**record, "metadata": {"rubric": {"criteria": [{**own["criteria"][0], "scale": [5, 1]}]}}}
    data.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"record 1 \(id='c1'\), field 'metadata.rubric'.*low to high"):
        get_benchmark("dialogue").load(data, {})
