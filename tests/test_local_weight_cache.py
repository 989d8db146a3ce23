"""Local models: dequantized GGUF weights kept as safetensors, per-row answer caps, torch threads.

Tiny random models that the tests build themselves (tests/tiny_models.py); nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from dialeval.models import local_loading, local_models
from dialeval.models.local_models import LocalChatModel, gguf_cache_folder
from tests.tiny_models import build_causal_lm, build_gguf_lm


@pytest.fixture
def weight_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "weights"
    monkeypatch.setenv(local_loading.WEIGHT_CACHE_ENV, str(folder))
    return folder


def _answer(engine: local_models.LocalEngine) -> str:
    request = engine.request([HumanMessage("Rate the answer from 0 to 5.")], "", None)
    (output,) = engine.generate([request], max_new_tokens=8, temperature=0.0)
    return output.text


def test_a_gguf_model_is_dequantized_once_then_read_from_the_weight_cache(tmp_path, weight_cache, monkeypatch):
    gguf = build_gguf_lm(tmp_path / "tiny.gguf")
    first = local_loading._load(str(gguf))
    cached = gguf_cache_folder(gguf)
    assert cached is not None and cached.parent == weight_cache
    assert (cached / "model.safetensors").is_file() and (cached / "tokenizer.json").is_file()

    from transformers import AutoModelForCausalLM

    read_from = []
    original = AutoModelForCausalLM.from_pretrained
    monkeypatch.setattr(
        AutoModelForCausalLM, "from_pretrained", lambda where, **kw: read_from.append((str(where), kw)) or original(where, **kw)
    )
    second = local_loading._load(str(gguf))
    assert read_from == [(str(cached), read_from[0][1])] and "gguf_file" not in read_from[0][1]
    assert _answer(second) == _answer(first)  # the same weights, the same greedy answer
    assert second.tokenizer.chat_template == first.tokenizer.chat_template and second.eos_ids == first.eos_ids


def test_a_model_saved_to_the_weight_cache_is_left_as_it_was(tmp_path, weight_cache):
    """The cache is written from copies: the loaded model keeps its GGUF settings."""
    import torch

    engine = local_loading._load(str(build_gguf_lm(tmp_path / "tiny.gguf")))
    assert getattr(engine.model.config, "quantization_config", None) is not None
    assert getattr(engine.model, "hf_quantizer", None) is not None
    again = local_loading._load(str(tmp_path / "tiny.gguf"))  # read back from the cache
    first, second = engine.model.state_dict(), again.model.state_dict()
    assert first.keys() == second.keys()
    assert all(torch.equal(first[name], second[name]) for name in first)  # tied weights too


def test_a_changed_gguf_file_is_dequantized_again(tmp_path, weight_cache):
    gguf = build_gguf_lm(tmp_path / "tiny.gguf", seed=0)
    local_loading._load(str(gguf))
    old = gguf_cache_folder(gguf)
    stat = gguf.stat()
    build_gguf_lm(gguf, seed=1)  # new weights in the same file, even with its old size and time
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    new = gguf_cache_folder(gguf)
    assert new != old
    local_loading._load(str(gguf))
    assert sorted(p.name for p in weight_cache.iterdir()) == sorted([old.name, new.name])


def test_copies_of_one_gguf_file_share_one_cache_folder(tmp_path, weight_cache):
    """Each virtualenv or clone installs SmolLM2's file again; its weights are kept once."""
    import shutil

    gguf = build_gguf_lm(tmp_path / "a" / "tiny.gguf")
    copy = tmp_path / "b" / "tiny.gguf"
    copy.parent.mkdir()
    shutil.copyfile(gguf, copy)
    local_loading._load(str(gguf))
    assert gguf_cache_folder(copy) == gguf_cache_folder(gguf)
    local_loading._load(str(copy))
    assert len(list(weight_cache.iterdir())) == 1


def test_a_damaged_cache_is_replaced_from_the_gguf_file(tmp_path, weight_cache):
    gguf = build_gguf_lm(tmp_path / "tiny.gguf")
    expected = _answer(local_loading._load(str(gguf)))
    cached = gguf_cache_folder(gguf)
    (cached / "model.safetensors").unlink()
    assert _answer(local_loading._load(str(gguf))) == expected
    assert (cached / "model.safetensors").is_file()


def test_the_weight_cache_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(local_loading.WEIGHT_CACHE_ENV, "off")
    gguf = build_gguf_lm(tmp_path / "tiny.gguf")
    assert gguf_cache_folder(gguf) is None
    monkeypatch.delenv(local_loading.WEIGHT_CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_cache_folder(gguf).parent == tmp_path / "xdg" / "dialeval" / "weights"


async def test_roles_with_different_answer_caps_share_one_batch(tmp_path):
    folder = build_causal_lm(tmp_path / "tiny")
    short = LocalChatModel.load(source=str(folder), max_new_tokens=4, batch_size=8)
    long = LocalChatModel.load(source=str(folder), max_new_tokens=12, batch_size=8)
    short.engine.batch_sizes.clear()
    question = [HumanMessage("Is it knowable?")]
    a, b = await asyncio.gather(short.ainvoke(question), long.ainvoke(question))
    assert list(short.engine.batch_sizes) == [2]
    assert a.usage_metadata["output_tokens"] == 4 and a.response_metadata["finish_reason"] == "length"
    assert b.usage_metadata["output_tokens"] == 12 and b.response_metadata["finish_reason"] == "length"


@pytest.mark.parametrize(("load", "threads"), [(0.2, 2), (0.9, 1), (1.7, 1), (6.0, 1)])
def test_torch_threads_leave_out_the_cores_others_keep_busy(monkeypatch, load, threads):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert local_loading._threads() == threads
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert local_loading._threads() == 3
