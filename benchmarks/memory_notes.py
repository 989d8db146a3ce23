"""How fast a NoteStore answers top-k queries over 1,000 note entries (real MiniLM embeddings).

    python benchmarks/memory_notes.py [--entries 1000] [--queries 50] [--k 8]

Prints the time to write the note (embedding included) and the median / 95th
percentile latency of ``NoteStore.search`` for one conversation among two, with the
embedded PersistentClient in a temporary folder. Numbers only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

TOPICS = ["food", "travel", "health", "sport", "music", "home", "work", "family", "money", "books"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=8)
    args = parser.parse_args()

    from dialeval.memory.embeddings import embed
    from dialeval.memory import MemorySettings, open_note_store

    started = time.perf_counter()
    embed(["warm up"])
    load_s = time.perf_counter() - started

    note = {}
    for i in range(args.entries):
        note.setdefault(TOPICS[i % len(TOPICS)], {})[f"fact_{i:04d}"] = f"the user said thing {i} about {TOPICS[i % len(TOPICS)]}"

    with tempfile.TemporaryDirectory() as folder:
        store = open_note_store(MemorySettings(path=folder, collection="bench"))
        started = time.perf_counter()
        change = store.update("big", note, turn=1)
        write_s = time.perf_counter() - started
        store.update("small", {"food": {"fact_0000": "likes curry"}}, turn=1)
        assert store.count("big") == args.entries and len(change.added) == args.entries

        latencies = []
        for q in range(args.queries):
            query = f"What did the user say about {TOPICS[q % len(TOPICS)]}?"
            started = time.perf_counter()
            hits = store.search("big", query, k=args.k)
            latencies.append(time.perf_counter() - started)
            assert len(hits) == args.k
        started = time.perf_counter()
        whole = store.note("big")
        note_s = time.perf_counter() - started
        assert sum(len(v) for v in whole.values()) == args.entries

    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(f"model load + first embedding: {load_s:.2f} s")
    print(f"write {args.entries} entries (embedding included): {write_s:.2f} s")
    print(f"top-{args.k} search over {args.entries} entries, {args.queries} queries: "
          f"median {1000 * statistics.median(latencies):.1f} ms, p95 {1000 * p95:.1f} ms")
    print(f"read the whole note ({args.entries} entries): {1000 * note_s:.1f} ms")


if __name__ == "__main__":
    main()
