"""Runs for the gate tests: an `answers` file whose answers carry the grade the stub judge gives."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, last_user_text

GRADE = re.compile(r"grade (\d)")


def grade_by_answer(body: dict[str, Any]) -> str:
    """The stub judge: the score an answer names (``... grade 4``); ``OK`` to the preflight."""
    found = GRADE.findall(last_user_text(body).split("<system_answer>")[-1])
    return json.dumps({"rationale": "read", "score": int(found[0])}) if found else "OK"


def write_answers(path: Path, grades: dict[str, int], system: str = "bot") -> Path:
    """One answer per unit id, graded as ``grades`` says."""
    rows = [{"id": unit, "question": f"Question {unit}?", "reference": "ref", "answer": f"answer grade {g}", "system": system}
            for unit, g in grades.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_answers(server: OpenAIStub, tmp_path: Path, name: str, grades: dict[str, int]) -> Path:
    """Judge ``grades``'s answers over HTTP; the run folder."""
    config = RunConfig(model=ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0),
                       cache_path=str(tmp_path / "cache.sqlite"), output_dir=str(tmp_path / "runs"), run_id=name,
                       parse_retries=0, concurrency=4)
    return Path(run("answers", write_answers(tmp_path / f"{name}.jsonl", grades), config, progress=False).run_dir)
