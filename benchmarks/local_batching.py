"""How much batching buys the local backend: tokens/second for 8 prompts, one at a time vs together.

Also prints the model load time and the latency of one call with a ~300-token prompt
and 64 new tokens. Run: ``.venv/bin/python benchmarks/local_batching.py [--spec smollm2]``.
Greedy decoding; every prompt asks for a long answer so most rows run to the token limit.
``OMP_NUM_THREADS=1`` compares one torch thread with the default (all cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOPICS = ["rivers", "bicycles", "volcanoes", "libraries", "bees", "lighthouses", "chess", "bread"]
LONG_CONTEXT = (
    "A small town sits between two hills. Every morning the baker opens at six, the ferry leaves at seven, "
    "and the school bell rings at eight. The mayor wants to move the market from Saturday to Sunday, the "
    "fishermen object because the ferry does not run on Sundays, and the teachers worry about noise. "
)


def _messages(text: str) -> list:
    from langchain_core.messages import HumanMessage

    return [HumanMessage(text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="smollm2")
    parser.add_argument("--new-tokens", type=int, default=64)
    args = parser.parse_args()

    from dialeval.config import ModelSettings
    from dialeval.models.local_loading import _threads
    from dialeval.models.client import build_chat_model

    started = time.perf_counter()
    model = build_chat_model(ModelSettings(spec=args.spec, max_tokens=args.new_tokens, batch_size=8))
    print(f"model {args.spec}: loaded in {time.perf_counter() - started:.1f} s (torch threads: {_threads()})")

    prompts = [_messages(f"Write a long, detailed essay about {t}.") for t in TOPICS]
    model.invoke(_messages("Hello"))  # warm-up

    started = time.perf_counter()
    sequential = [model.invoke(p) for p in prompts]
    seq_time = time.perf_counter() - started
    seq_tokens = sum(r.usage_metadata["output_tokens"] for r in sequential)

    started = time.perf_counter()
    batched = asyncio.run(model.abatch(prompts))
    batch_time = time.perf_counter() - started
    batch_tokens = sum(r.usage_metadata["output_tokens"] for r in batched)

    same = sum(a.content == b.content for a, b in zip(sequential, batched))
    seq_rate, batch_rate = seq_tokens / seq_time, batch_tokens / batch_time
    print(f"sequential: {seq_tokens} tokens in {seq_time:.2f} s = {seq_rate:.1f} tokens/s")
    print(f"batched:    {batch_tokens} tokens in {batch_time:.2f} s = {batch_rate:.1f} tokens/s "
          f"(batches of {list(model.engine.batch_sizes)[-3:]})")
    print(f"speed-up: {batch_rate / seq_rate:.2f}x; identical greedy answers: {same}/{len(prompts)}")

    context = LONG_CONTEXT * 5
    question = _messages(f"{context}\nSummarize the disagreement in the town in three sentences.")
    latencies = []
    for _ in range(3):
        started = time.perf_counter()
        answer = model.invoke(question)
        latencies.append(time.perf_counter() - started)
    usage = answer.usage_metadata
    print(f"one call, {usage['input_tokens']}-token prompt, {usage['output_tokens']} new tokens "
          f"({answer.response_metadata['finish_reason']}): {min(latencies):.2f} s best of 3, "
          f"{sum(latencies) / 3:.2f} s mean")


if __name__ == "__main__":
    main()
