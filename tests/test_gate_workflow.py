"""docs/gate.md's GitHub Actions workflow, run: its `run:` steps in order in a temporary
folder (the checkout, setup-python, cache and JUnit-publishing actions left out), with
dialeval installed from this repository (`DIALEVAL_SOURCE`) and the judge a stub server.

The install step is the workflow's own command through a `pip` that adds `--dry-run
--no-deps --no-index --no-build-isolation`: it must resolve the repository as the `dialeval`
project, offline. A real install would need the package index for dialeval's dependencies,
so the `dialeval` steps run with the test's environment and this checkout's code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dialeval.testing.openai_server import OpenAIStub
from tests.gate_helpers import grade_by_answer, write_answers

ROOT = Path(__file__).resolve().parents[1]


def workflow() -> dict:
    text = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(# \.github/workflows/eval-gate\.yml\n.*?)```", text, flags=re.S)
    return yaml.safe_load(block)


def test_the_workflow_installs_dialeval_from_its_repository_not_an_index():
    job = workflow()["jobs"]["gate"]
    installs = [s["run"] for s in job["steps"] if "pip install" in s.get("run", "")]
    assert installs == ['pip install "$DIALEVAL_SOURCE"']
    assert job["env"]["DIALEVAL_SOURCE"].startswith(("./", "git+"))


def _evals(folder: Path, base_url: str) -> None:
    evals = folder / "evals"
    evals.mkdir()
    write_answers(evals / "answers.jsonl", {f"q{i:02d}": 3 + i % 3 for i in range(30)})
    (evals / "judge.yaml").write_text(f"model: {{spec: 'openai-compatible:stub', base_url: '{base_url}', max_retries: 0}}\n")
    (evals / "cost-gates.yaml").write_text('rules:\n  - "cost.usd <= 2"\n')
    (evals / "gates.yaml").write_text('rules:\n  - "score.mean >= 3"\n  - "failures.share <= 0.02"\n'
                                      "  - regression: score\n    margin: 0.5\n")


def _env(folder: Path) -> dict[str, str]:
    shims = folder / ".shims"
    shims.mkdir()
    pip = shims / "pip"
    pip.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pip "$@" --dry-run --no-deps --no-index --no-build-isolation\n')
    pip.chmod(0o755)
    venv_bin = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([str(shims), venv_bin, os.environ.get("PATH", "")]),
            "PYTHONPATH": str(ROOT / "src"), "DIALEVAL_SOURCE": str(ROOT),
            "GITHUB_STEP_SUMMARY": str(folder / "step-summary.md"), "OPENAI_API_KEY": "sk-test-not-a-secret"}


def _step(command: str, folder: Path, env: dict[str, str], extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    step_env = {**env, **{k: re.sub(r"\$\{\{.*?\}\}", "sk-test-not-a-secret", str(v)) for k, v in (extra or {}).items()}}
    return subprocess.run(["bash", "-e", "-c", command], cwd=folder, env=step_env, capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(480)
def test_the_workflow_steps_run_in_a_fresh_folder(tmp_path):
    job = workflow()["jobs"]["gate"]
    with OpenAIStub(respond=grade_by_answer) as server:
        _evals(tmp_path, server.base_url)
        env = _env(tmp_path)
        baseline = _step("dialeval run answers --data evals/answers.jsonl --config evals/judge.yaml --run-id baseline "
                         "--no-progress && mv runs/baseline evals/baseline-run", tmp_path, env)
        assert baseline.returncode == 0, baseline.stderr[-2000:]
        ran = []
        for step in job["steps"]:
            if "run" not in step:
                continue
            done = _step(step["run"], tmp_path, {**env, **{k: str(v) for k, v in (job.get("env") or {}).items()},
                                                 "DIALEVAL_SOURCE": str(ROOT)}, step.get("env"))
            assert done.returncode == 0, f"{step.get('name', step['run'])}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
            ran.append(done.stdout)
    assert "Would install dialeval" in ran[0]
    assert "PASS  cost.usd <= 2" in ran[1]
    assert "PASS  no regression of score beyond 0.5" in ran[3] and "gate passed: 3 of 3 rules passed" in ran[3]
    assert (tmp_path / "gate.xml").is_file()
    assert (tmp_path / "step-summary.md").read_text().startswith("## dialeval gate: passed")
