"""The prefix-cache emulator follows OpenAI's rule: 1,024 tokens at least, steps of 128."""

from __future__ import annotations

from dialeval.models.prompt_cache import PrefixCache, prompt_tokens


def test_a_repeated_prefix_is_served_in_steps_of_128_tokens():
    cache = PrefixCache()
    history = list(range(1500))
    assert cache.lookup_and_add(history) == 0  # nothing seen yet
    longer = history + list(range(5000, 5300))  # the same history with a new turn appended
    assert cache.lookup_and_add(longer) == 1408  # 11 x 128: the largest step inside the 1,500 shared tokens
    assert cache.lookup_and_add(longer) == 1792  # the whole prompt, rounded down to a step


def test_prefixes_shorter_than_1024_tokens_are_never_cached():
    cache = PrefixCache()
    short = list(range(1000))
    cache.lookup_and_add(short)
    assert cache.lookup_and_add(short) == 0


def test_a_change_early_in_the_prompt_breaks_the_prefix():
    cache = PrefixCache()
    first = list(range(3000))
    cache.lookup_and_add(first)
    edited = [7, *first[1:]]  # same length, first token differs
    assert cache.lookup_and_add(edited) == 0


def test_prompts_are_tokenized_with_their_roles():
    a = prompt_tokens([("system", "Judge the answer."), ("user", "Q1")])
    b = prompt_tokens([("user", "Judge the answer."), ("user", "Q1")])
    assert a != b and len(a) > 4


def test_anthropic_breakpoints_mark_the_system_prompt_and_the_conversation_so_far():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from dialeval.models.prompt_cache import with_cache_breakpoints

    conversation = [SystemMessage("You judge answers."), HumanMessage("Turn 1"), AIMessage("Rated 3."), HumanMessage("Turn 2")]
    system, first, answer, new = with_cache_breakpoints(conversation)
    assert system.content[-1]["cache_control"] == {"type": "ephemeral"}
    assert answer.content == [{"type": "text", "text": "Rated 3.", "cache_control": {"type": "ephemeral"}}]
    assert first.content == "Turn 1" and new.content == "Turn 2"  # unmarked, unchanged
    single = with_cache_breakpoints([HumanMessage("one question")])
    assert single[0].content == "one question"  # nothing stable to mark
