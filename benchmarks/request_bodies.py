"""Print a digest of every request body the demo runs send, to compare two checkouts.

Run it once per checkout (``PYTHONPATH=<checkout>/src``) and diff the outputs: the same
lines mean the same requests, byte for byte in JSON (headers aside). The test server
answers every call with one fixed reply; the order of requests is left out.

    PYTHONPATH=src python benchmarks/request_bodies.py > after.txt
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import dialeval
from dialeval.testing.openai_server import OpenAIStub

FIXTURES = Path(dialeval.__file__).parent / "fixtures"
RUNS = [  # (benchmark, data, model spec)
    ("answers", "answers_demo.jsonl", "openai:gpt-4o-mini"),
    ("answers", "answers_demo.jsonl", "anthropic:claude-haiku-4-5"),
    ("answers", "answers_demo.jsonl", "openai-compatible:judge"),
    ("vdact", "vdact_demo/predictions/demo-bot.json", "openai:gpt-4o-mini"),
    ("kgds", "kgds_demo.json", "openai:gpt-4o-mini"),
    ("mdseval", "mdseval_demo.json", "openai:gpt-4o-mini"),
    ("mmdu", "mmdu_demo.json", "anthropic:claude-haiku-4-5"),
    ("dialogue", "dialogue_demo.jsonl", "openai:gpt-4o-mini"),
]


def reply(body: dict) -> object:
    if body.get("tools"):  # Anthropic's structured output: one forced tool call
        return "", "tool_use", {"score": 3, "rationale": "fine"}
    return '{"score": 3, "rationale": "fine"}'


def main() -> None:
    os.environ.update(OPENAI_API_KEY="sk-test", ANTHROPIC_API_KEY="sk-test")
    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        for benchmark, data, spec in RUNS:
            if only and benchmark not in only:
                continue
            with OpenAIStub(respond=reply) as server:
                url = server.root_url if spec.startswith("anthropic:") else server.base_url
                try:
                    dialeval.evaluate(benchmark, FIXTURES / data, model=spec, base_url=url, cache_path=None,
                                      output_dir=f"{tmp}/{benchmark}-{spec}", limit=3, preflight=False)
                except Exception as err:  # noqa: BLE001  (printed: a run that fails in one checkout shows in the diff)
                    print(benchmark, spec, "failed:", type(err).__name__)
                bodies = sorted(json.dumps(b, sort_keys=True) for b in server.requests if "messages" in b)
            digest = hashlib.sha256("\n".join(bodies).encode()).hexdigest()[:16]
            print(f"{benchmark:9} {spec:28} {len(bodies):4} requests  {digest}")


if __name__ == "__main__":
    main()
