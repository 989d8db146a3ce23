"""NoteStore: one document per note key, overwritten in place, never mixed across conversations."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from chromadb.api.types import EmbeddingFunction

from dialeval.memory import MemorySettings, NoteStore, flatten, open_note_store, unflatten
from dialeval.memory.client import collection_name, forget_stores


class HashEmbedding(EmbeddingFunction):
    """A cheap deterministic stand-in for MiniLM: bag of hashed words (unit length)."""

    def __init__(self) -> None:
        pass

    def __call__(self, input):
        out = []
        for text in input:
            v = np.zeros(64, dtype=np.float32)
            for word in text.lower().split():
                v[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
            out.append(v / (np.linalg.norm(v) or 1.0))
        return out

    @staticmethod
    def name() -> str:
        return "test-hash"

    def get_config(self):
        return {}

    @staticmethod
    def build_from_config(config):
        return HashEmbedding()

    def default_space(self):
        return "cosine"

    def supported_spaces(self):
        return ["cosine"]


def hash_store(tmp_path, name: str = "notes-test") -> NoteStore:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False))
    return NoteStore(client.get_or_create_collection(name, embedding_function=HashEmbedding()))


def test_changed_fact_is_stored_once_with_the_new_value_and_turn(tmp_path):
    store = hash_store(tmp_path)
    store.update("trip", {"user": {"home_city": "Lyon", "diet": ["vegetarian"]}}, turn=3)
    change = store.update("trip", {"user": {"home_city": "Porto", "diet": ["vegetarian"]}}, turn=9)

    assert change.changed == ["user/home_city"] and change.added == [] and change.removed == []
    entries = {e.key: e for e in store.entries("trip")}
    assert store.count("trip") == 2
    assert entries["user/home_city"].value == "Porto" and entries["user/home_city"].turn == 9
    assert entries["user/diet"].turn == 3  # unchanged entries keep the turn they were written
    assert store.note("trip") == {"user": {"diet": ["vegetarian"], "home_city": "Porto"}}


def test_keys_dropped_from_the_note_are_deleted(tmp_path):
    store = hash_store(tmp_path)
    store.update("c", {"plan": "Sintra", "budget": "60 euros"}, turn=1)
    change = store.update("c", {"budget": "60 euros"}, turn=2)
    assert change.removed == ["plan"]
    assert store.note("c") == {"budget": "60 euros"}


def test_two_conversations_never_mix(tmp_path):
    store = hash_store(tmp_path)
    store.update("a", {"preferences": {"food": "curry"}}, turn=1)
    store.update("b", {"preferences": {"food": "sushi"}}, turn=1)
    store.update("b", {"preferences": {"food": "ramen"}}, turn=2)

    assert store.note("a") == {"preferences": {"food": "curry"}}
    assert store.note("b") == {"preferences": {"food": "ramen"}}
    assert [e.value for e in store.search("a", "favourite food", k=5)] == ["curry"]
    store.clear("b")
    assert store.note("b") == {} and store.note("a") == {"preferences": {"food": "curry"}}


def test_a_thousand_note_store_answers_a_top_k_query(tmp_path):
    store = hash_store(tmp_path)
    note = {f"fact_{i:04d}": f"item number {i} colour {['red', 'green', 'blue'][i % 3]}" for i in range(1000)}
    store.update("big", note, turn=1)
    store.update("other", {"fact_0001": "item number 1 colour red"}, turn=1)

    hits = store.search("big", "item number 42 colour red", k=5)

    assert store.count("big") == 1000
    assert len(hits) == 5
    assert all(h.key in note for h in hits)
    assert hits == sorted(hits, key=lambda h: h.distance)


def test_flatten_and_unflatten_round_trip():
    note = {"user_info": {"health": ["dairy allergy"], "city": "Oslo"}, "purpose": "meal ideas", "empty": {}}
    flat = flatten(note)
    assert flat == {("user_info", "health"): ["dairy allergy"], ("user_info", "city"): "Oslo", ("purpose",): "meal ideas"}
    from dialeval.memory.notes import NoteEntry

    assert unflatten([NoteEntry(p, v, 1) for p, v in flat.items()]) == {
        "purpose": "meal ideas",
        "user_info": {"city": "Oslo", "health": ["dairy allergy"]},
    }


def test_embedded_store_lives_under_the_run_folder_and_survives_reopening(tmp_path):
    run_dir = tmp_path / "mmrc-abc123"
    settings = MemorySettings()
    store = open_note_store(settings, str(run_dir), embedding_function=HashEmbedding())
    store.update("c1", {"goal": "finish a 10k"}, turn=4)
    forget_stores()
    again = open_note_store(settings, str(run_dir), embedding_function=HashEmbedding())
    assert (run_dir / "notes").is_dir()
    assert again.note("c1") == {"goal": "finish a 10k"}
    assert collection_name(settings, str(run_dir)) == "mmrc-abc123"
    forget_stores()


@pytest.mark.slow
def test_minilm_embeddings_find_the_fact_closest_in_meaning(tmp_path):
    store = open_note_store(MemorySettings(path=str(tmp_path / "minilm")))
    store.update(
        "c",
        {"preferences": {"food": "spicy vegetarian curry"}, "events": {"race": "a 10 km run in eight weeks"}, "home": "a flat in Lisbon"},
        turn=2,
    )
    best = store.search("c", "What does the user like to eat?", k=1)
    assert [e.key for e in best] == ["preferences/food"]
    forget_stores()
