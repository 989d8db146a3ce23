"""Heavy libraries load only in the runs that use them: `dialeval run answers` with an API
judge, in a process of its own, ends without torch, transformers, chromadb, nltk, scipy
or scikit-learn in ``sys.modules``. matplotlib loads only once the report draws its
figures (after the last item), and a dry run, which draws none, never loads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dialeval.testing.openai_server import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'
HEAVY = ("matplotlib", "chromadb", "transformers", "torch", "nltk", "scipy", "sklearn")

# runs the command line as the `dialeval` program does, then lists what it imported
PROBE = """
import json, sys
from dialeval.cli import main
code = main()
loaded = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"code": code, "loaded": loaded}))
"""


def run_in_own_process(argv: list[str], cwd: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_an_answers_run_with_an_api_judge_imports_no_heavy_library(tmp_path):
    with OpenAIStub(respond=lambda body: GRADE) as server:
        argv = ["run", "answers", "--data", str(DATA), "--model", "openai-compatible:judge", "--base-url", server.base_url,
                "--output-dir", str(tmp_path / "runs"), "--no-cache", "--no-progress"]  # fmt: skip
        result = run_in_own_process(argv, tmp_path)
        graded = len(server.completions)
    assert result["code"] == 0 and graded == 3  # the run really evaluated the three answers
    loaded = set(result["loaded"])
    assert {"openai", "langchain_openai", "langgraph"} <= loaded  # the one path: the chat model in the graph
    assert sorted(loaded & set(HEAVY)) == ["matplotlib"]  # the report's score histogram, drawn at the end


def test_a_dry_run_loads_no_heavy_library_not_even_for_figures(tmp_path):
    argv = ["run", "answers", "--data", str(DATA), "--model", "dry-run", "--output-dir", str(tmp_path / "runs"),
            "--no-cache", "--no-progress"]  # fmt: skip
    result = run_in_own_process(argv, tmp_path)
    assert result["code"] == 0
    assert sorted(set(result["loaded"]) & set(HEAVY)) == []


def test_dialeval_list_loads_no_heavy_library(tmp_path):
    """`dialeval list` imports every benchmark: their statistics must not pull scipy in at import."""
    result = run_in_own_process(["list"], tmp_path)
    assert result["code"] == 0
    assert sorted(set(result["loaded"]) & set(HEAVY)) == []
