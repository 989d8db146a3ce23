"""Function-calling datasets as their rows are published: one real-shaped row of each
(ShareGPT with function_call/observation, Hermes tags, ToolACE, glaive-function-calling-v2,
xlam/APIGen) imports into turns with every call, argument and result; the shape is named
(with a did-you-mean) or detected, and a saved dataset folder loads."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.data.importers import import_file
from dialeval.errors import DataError
from dialeval.conversation.data import load_conversations

HERMES_SYSTEM = (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. "
    "You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug "
    "into functions.\n<tools>\n[{'type': 'function', 'function': {'name': 'get_stock_price', 'description': 'Get the current "
    "stock price of a company', 'parameters': {'type': 'object', 'properties': {'company_symbol': {'type': 'string', "
    "'description': 'The symbol of the company'}}, 'required': ['company_symbol']}}}]\n</tools>\nFor each function call "
    "return a json object with function name and arguments within <tool_call> </tool_call> tags with the following schema:"
    "\n<tool_call>\n{'arguments': <args-dict>, 'name': <function-name>}\n</tool_call>\n")
ROWS = {
    "sharegpt": {"conversations": [
        {"from": "human", "value": "Hi, I need to convert 500 USD to Euros. Can you help me with that?"},
        {"from": "function_call", "value": "{\"name\": \"convert_currency\", \"arguments\": {\"amount\": 500, \"from_currency\": \"USD\", \"to_currency\": \"EUR\"}}"},
        {"from": "observation", "value": "{\"converted_amount\": 420.5, \"from_currency\": \"USD\", \"to_currency\": \"EUR\"}"},
        {"from": "gpt", "value": "Sure, 500 USD is approximately 420.50 Euros."}],
        "tools": "[{\"name\": \"convert_currency\", \"description\": \"Convert currency from one type to another\", \"parameters\": "
                 "{\"type\": \"object\", \"properties\": {\"amount\": {\"type\": \"number\"}, \"from_currency\": {\"type\": \"string\"}, "
                 "\"to_currency\": {\"type\": \"string\"}}, \"required\": [\"amount\", \"from_currency\", \"to_currency\"]}}]"},
    "hermes": {"id": "85f6c398-69c7-4df2-aed1-29d614a93a26", "category": "Finance", "conversations": [
        {"from": "system", "value": HERMES_SYSTEM},
        {"from": "human", "value": "What's the current stock price of Apple?"},
        {"from": "gpt", "value": "<tool_call>\n{'arguments': {'company_symbol': 'AAPL'}, 'name': 'get_stock_price'}\n</tool_call>"},
        {"from": "tool", "value": "<tool_response>\n{'name': 'get_stock_price', 'content': {'price': 150.75}}\n</tool_response>"},
        {"from": "gpt", "value": "The current stock price of Apple (AAPL) is $150.75."}]},
    "toolace": {"system": "You are an expert in composing functions. You are given a question and a set of possible functions. "
                          "Based on the question, you will need to make one or more function/tool calls to achieve the purpose.\n"
                          "Here is a list of functions in JSON format that you can invoke:\n[{\"name\": \"Get Exchange Rate\", "
                          "\"description\": \"Retrieve the exchange rate between two currencies\", \"parameters\": {\"type\": \"dict\", "
                          "\"properties\": {\"source_currency\": {\"type\": \"string\"}, \"target_currency\": {\"type\": \"string\"}}, "
                          "\"required\": [\"source_currency\", \"target_currency\"]}, \"required\": null}]. \nShould you decide to return "
                          "the function call(s), Put it in the format of [func1(params_name=params_value, params_name2=params_value2...), "
                          "func2(params)]\n\nNO other text MUST be included.",
                "conversations": [
                    {"from": "user", "value": "What is the exchange rate from EUR to USD today?"},
                    {"from": "assistant", "value": "[Get Exchange Rate(source_currency=\"EUR\", target_currency=\"USD\")]"},
                    {"from": "tool", "value": "[{\"name\": \"Get Exchange Rate\", \"results\": {\"rate\": 1.08}}]"},
                    {"from": "assistant", "value": "Today 1 EUR is worth 1.08 USD."}]},
    "glaive": {"system": "SYSTEM: You are a helpful assistant with access to the following functions. Use them if required -\n{\n"
                         "    \"name\": \"calculate_bmi\",\n    \"description\": \"Calculate the Body Mass Index (BMI)\",\n    \"parameters\": "
                         "{\n        \"type\": \"object\",\n        \"properties\": {\n            \"weight\": {\"type\": \"number\"},\n"
                         "            \"height\": {\"type\": \"number\"}\n        },\n        \"required\": [\"weight\", \"height\"]\n    }\n}\n",
               "chat": "USER: Hi, I would like to calculate my BMI. I weigh 70 kilograms and my height is 1.75 meters.\n\n\nASSISTANT: "
                       "<functioncall> {\"name\": \"calculate_bmi\", \"arguments\": '{\"weight\": 70, \"height\": 1.75}'} <|endoftext|>\n\n\n"
                       "FUNCTION RESPONSE: {\"bmi\": 22.86}\n\n\nASSISTANT: Your Body Mass Index (BMI) is 22.86. <|endoftext|>\n\n\n"
                       "USER: Great, thanks!\n\n\nASSISTANT: You're welcome! <|endoftext|>\n"},
    "xlam": {"id": 1, "query": "Where can I find live giveaways for beta access and games?",
             "answers": "[{\"name\": \"live_giveaways_by_type\", \"arguments\": {\"type\": \"beta\"}}, "
                        "{\"name\": \"live_giveaways_by_type\", \"arguments\": {\"type\": \"game\"}}]",
             "tools": "[{\"name\": \"live_giveaways_by_type\", \"description\": \"Retrieve live giveaways from the GamerPower API based on "
                      "the specified type.\", \"parameters\": {\"type\": {\"description\": \"The type of giveaways to retrieve (e.g., game, "
                      "loot, beta).\", \"type\": \"str\", \"default\": \"game\"}}}]"},
}
EXPECTED = {  # (role, text, [(call, arguments, result)]) of each turn, and the tool names
    "sharegpt": ([("user", "Hi, I need to convert 500 USD to Euros. Can you help me with that?", []),
                  ("assistant", "Sure, 500 USD is approximately 420.50 Euros.",
                   [("convert_currency", {"amount": 500, "from_currency": "USD", "to_currency": "EUR"},
                     "{\"converted_amount\": 420.5, \"from_currency\": \"USD\", \"to_currency\": \"EUR\"}")])], ["convert_currency"]),
    "hermes": ([("user", "What's the current stock price of Apple?", []),
                ("assistant", "The current stock price of Apple (AAPL) is $150.75.",
                 [("get_stock_price", {"company_symbol": "AAPL"}, "{'name': 'get_stock_price', 'content': {'price': 150.75}}")])],
               ["get_stock_price"]),
    "toolace": ([("user", "What is the exchange rate from EUR to USD today?", []),
                 ("assistant", "Today 1 EUR is worth 1.08 USD.",
                  [("Get Exchange Rate", {"source_currency": "EUR", "target_currency": "USD"},
                    "{\"name\": \"Get Exchange Rate\", \"results\": {\"rate\": 1.08}}")])], ["Get Exchange Rate"]),
    "glaive": ([("user", "Hi, I would like to calculate my BMI. I weigh 70 kilograms and my height is 1.75 meters.", []),
                ("assistant", "Your Body Mass Index (BMI) is 22.86.", [("calculate_bmi", {"weight": 70, "height": 1.75}, "{\"bmi\": 22.86}")]),
                ("user", "Great, thanks!", []), ("assistant", "You're welcome!", [])], ["calculate_bmi"]),
    "xlam": ([("user", "Where can I find live giveaways for beta access and games?", []),
              ("assistant", "", [("live_giveaways_by_type", {"type": "beta"}, None), ("live_giveaways_by_type", {"type": "game"}, None)])],
             ["live_giveaways_by_type"]),
}


def turns(conv):
    return [(t.role, t.text, [(c.name, c.arguments, c.result) for c in t.tool_calls]) for t in conv.turns]


def tool_names(conv):
    return [(t.get("function") or t)["name"] for t in conv.tools]


@pytest.mark.parametrize("shape", list(ROWS))
def test_each_shape_detected_and_named(tmp_path, shape):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROWS[shape]) + "\n", encoding="utf-8")
    records, log = import_file("hf", path)
    assert f"detected the {shape} shape" in log.notes[0]
    assert import_file("hf", path, {"format": shape})[0] == records  # named, the same rows
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps(records[0]) + "\n", encoding="utf-8")
    conv = load_conversations(out)[0]
    assert (turns(conv), tool_names(conv)) == EXPECTED[shape]


def test_xlam_answers_are_the_reference_calls(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROWS["xlam"]) + "\n", encoding="utf-8")
    record = import_file("hf", path)[0][0]
    assert record["id"] == "1" and record["reference_tool_calls"] == [
        {"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}, {"name": "live_giveaways_by_type", "arguments": {"type": "game"}}]


def test_a_misspelt_shape_gets_a_did_you_mean(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROWS["hermes"]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="option format: 'hermess' is not a dataset shape; did you mean 'hermes'"):
        import_file("hf", path, {"format": "hermess"})


def test_columns_map_other_names_and_the_cli_says_the_shape(tmp_path, capsys):
    row = {"uid": "q1", "question": ROWS["xlam"]["query"], "calls": ROWS["xlam"]["answers"], "api": ROWS["xlam"]["tools"]}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    columns = json.dumps({"id": "uid", "query": "question", "answers": "calls", "tools": "api"})
    out = tmp_path / "chats.jsonl"
    assert main(["import", "hf", str(path), "-o", str(out), "--option", "format=xlam", "--option", f"columns={columns}"]) == 0
    assert "1 conversations, 2 turns, 2 tool calls" in capsys.readouterr().out
    assert [c.id for c in load_conversations(out)] == ["q1"]


@pytest.mark.timeout(120)
def test_a_saved_dataset_folder_loads(tmp_path):
    datasets = pytest.importorskip("datasets")  # the import extra
    folder = tmp_path / "glaive"
    datasets.Dataset.from_list([ROWS["glaive"], ROWS["glaive"]]).save_to_disk(str(folder))
    records, log = import_file("hf", folder)
    assert [r["id"] for r in records] == ["0", "1"] and "glaive" in log.notes[0]
