"""``--shard i/n`` and ``dialeval merge``: a run split over machines ends as the run one machine writes.

Three shards judge disjoint parts that cover the items, each in its own folder; merged,
they give the rows, ``metrics.json`` and ``usage.json`` of one unsharded run, in the folder
that run would have had. Shards of another setup, of other data, a shard missing or given
twice are refused before anything is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialeval.config import ConfigError, RunConfig
from dialeval.evaluation import merge, run
from dialeval.errors import RunError
from dialeval.models.prompt_store import load_prompts
from dialeval.run.folder import results_by_id
from dialeval.testing.openai_server import OpenAIStub
from tests.helpers import http_config
from tests.test_processes import answers_data, grade, run_files

ROOT = Path(__file__).resolve().parents[1]


def _config(tmp_path: Path, server: OpenAIStub, folder: str, **kw: object) -> RunConfig:
    """The config of one machine's run: its own output folder, no response cache (each answer is asked)."""
    config = http_config(tmp_path, {"spec": "openai-compatible:judge", "base_url": server.base_url}, concurrency=4)
    return RunConfig.model_validate({**config.model_dump(), "output_dir": str(tmp_path / folder), "cache_path": None, **kw})


@pytest.mark.timeout(240)
def test_three_shards_merged_equal_one_run(tmp_path):
    data = answers_data(tmp_path, 14)
    with OpenAIStub(respond=grade) as server:
        whole = run("answers", data, _config(tmp_path, server, "whole"), progress=False)
        shards = [run("answers", data, _config(tmp_path, server, "shards", shard=f"{i}/3"), progress=False)
                  for i in (1, 2, 3)]
    parts = [set(results_by_id(shard.run_dir)) for shard in shards]
    assert [len(part) for part in parts] == [5, 5, 4]  # dealt out in turn
    assert set().union(*parts) == set(results_by_id(whole.run_dir)) and sum(map(len, parts)) == 14  # disjoint, covering
    assert [shard.run_dir.name for shard in shards] == [f"{whole.run_dir.name}-shard{i}of3" for i in (1, 2, 3)]

    merged = merge([shard.run_dir for shard in reversed(shards)])  # in any order
    assert merged.complete and merged.run_dir == tmp_path / "shards" / whole.run_dir.name  # the unsharded run's id
    assert run_files(merged.run_dir) == run_files(whole.run_dir)
    ids = [json.loads(line)["id"] for line in (merged.run_dir / "results.jsonl").read_text().splitlines()]
    assert ids == [f"item-{i}" for i in range(14)]  # the data's order
    assert len(load_prompts(merged.run_dir)) == 14  # every shard's prompts, for the viewer
    config = json.loads((merged.run_dir / "config.json").read_text())
    assert config["shard"] is None and len(config["provenance"]["merged_from"]) == 3
    with pytest.raises(RunError, match="a run folder is there already"):
        merge([shard.run_dir for shard in shards])


@pytest.mark.timeout(240)
def test_merge_refuses_shards_of_another_setup_or_data_and_missing_or_repeated_shards(tmp_path):
    data = answers_data(tmp_path, 6)
    with OpenAIStub(respond=grade) as server:
        one, two = (run("answers", data, _config(tmp_path, server, "a", shard=f"{i}/2"), progress=False)
                    for i in (1, 2))
        other = run("answers", data, _config(tmp_path, server, "b", shard="2/2", parse_retries=1),
                    progress=False)
        unsharded = run("answers", data, _config(tmp_path, server, "c"), progress=False)
    with pytest.raises(RunError, match=r"not a shard of the same run as .*: the configuration changed \(context, parse_retries\)"):
        merge([one.run_dir, other.run_dir])
    with pytest.raises(RunError, match="shard 2/2 missing: give all 2 shard folders"):
        merge([one.run_dir])
    with pytest.raises(RunError, match="are both shard 1/2"):
        merge([one.run_dir, one.run_dir, two.run_dir])
    with pytest.raises(ConfigError, match="not a shard of a run"):
        merge([one.run_dir, unsharded.run_dir])
    data.write_text(data.read_text().replace("question 3", "question three"))
    with pytest.raises(RunError, match="not the data the shards judged"):
        merge([one.run_dir, two.run_dir])
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted([one.run_dir.name, two.run_dir.name])  # nothing written


@pytest.mark.timeout(240)
def test_the_cli_shards_and_merges_and_a_folder_keeps_its_shard(tmp_path):
    data = answers_data(tmp_path, 4)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with OpenAIStub(respond=grade) as server:
        base = [sys.executable, "-m", "dialeval.cli", "run", "answers", "--data", str(data), "--model", "openai-compatible:judge",
                "--base-url", server.base_url, "--output-dir", str(tmp_path / "runs"), "--no-progress", "--no-cache"]
        for i in (1, 2):
            done = subprocess.run([*base, "--shard", f"{i}/2", "--run-id", f"part{i}"], capture_output=True, text=True,
                                  env=env, timeout=120)
            assert done.returncode == 0, done.stderr
        again = subprocess.run([*base, "--shard", "2/2", "--run-id", "part1"], capture_output=True, text=True, env=env,
                               timeout=120)
        assert again.returncode == 2 and "holds shard 1/2, not 2/2" in again.stderr
        wrong = subprocess.run([*base, "--shard", "3/2"], capture_output=True, text=True, env=env, timeout=120)
        assert wrong.returncode == 2 and "the part is one of 1..2" in wrong.stderr
    merged = subprocess.run([sys.executable, "-m", "dialeval.cli", "merge", str(tmp_path / "runs" / "part1"),
                             str(tmp_path / "runs" / "part2"), "--out", str(tmp_path / "joined")],
                            capture_output=True, text=True, env=env, timeout=120)
    assert merged.returncode == 0, merged.stderr
    assert "Run folder: " + str(tmp_path / "joined") in merged.stdout
    assert len(results_by_id(tmp_path / "joined")) == 4
