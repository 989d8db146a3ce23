"""CPU per request of each layer a judge call goes through, against an instant stub server.

One process, 64 requests in flight, the same JSON body each time; the stub answers at once
in a process of its own, so the CPU time (``time.process_time``) is this process's alone.
Each layer adds one thing to the one below:

    httpx       a POST through the OpenAI SDK's default httpx client
    aiohttp     the same POST through aiohttp
    sdk-httpx   ``AsyncOpenAI.chat.completions.create`` over httpx (typed request handling)
    sdk-aiohttp the same over the SDK's documented ``DefaultAioHttpClient``
    langchain   ``ChatOpenAI.ainvoke`` over ``DefaultAioHttpClient`` (what dialeval sends through)
    langgraph   that call inside a two-node compiled LangGraph graph, one graph run per request

Each layer is measured ``--repeats`` times, each in a process of its own, layers interleaved
(this machine's figures vary by a third from run to run); the median is printed with the range.

Usage: python benchmarks/request_layers.py [--requests 1000] [--repeats 3] [--only httpx,aiohttp,...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from typing import Any, Awaitable, Callable, TypedDict

SCHEMA = {"type": "object", "properties": {"rationale": {"type": "string"}, "score": {"type": "integer"}}}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "Grade", "schema": SCHEMA, "strict": False}}
SYSTEM = "You grade answers from 1 to 5. " * 20
USER = "Question: 2+2? Reference: 4. Answer: 4. " * 10
BODY = {"model": "stub", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "max_tokens": 512, "temperature": 0.0, "response_format": RESPONSE_FORMAT}
LAYERS = ("httpx", "aiohttp", "sdk-httpx", "sdk-aiohttp", "langchain", "langgraph")
SERVER = """
import sys
from dialeval.testing.openai_server import OpenAIStub
with OpenAIStub(respond=lambda body: '{"rationale": "fine", "score": 4}') as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


async def one_request(layer: str, url: str) -> tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[None]]]:
    """(send one request, close) for ``layer``."""
    import openai

    if layer == "httpx":
        client = openai.DefaultAsyncHttpxClient()
        return (lambda: _post(client, url)), client.aclose
    if layer == "aiohttp":
        import aiohttp

        session = aiohttp.ClientSession()

        async def post() -> Any:
            async with session.post(url + "/chat/completions", json=BODY) as response:
                return await response.json()

        return post, session.close
    http = openai.DefaultAsyncHttpxClient() if layer == "sdk-httpx" else openai.DefaultAioHttpClient()
    if layer.startswith("sdk-"):
        sdk = openai.AsyncOpenAI(base_url=url, api_key="none", http_client=http)
        params = {k: v for k, v in BODY.items() if k != "response_format"}
        return (lambda: sdk.chat.completions.create(**params, extra_body={"response_format": RESPONSE_FORMAT})), sdk.close
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="stub", base_url=url, api_key="none", max_tokens=512, temperature=0.0, http_async_client=http)
    bound = model.bind(extra_body={"response_format": RESPONSE_FORMAT})
    messages = [SystemMessage(SYSTEM), HumanMessage(USER)]
    if layer == "langchain":
        return (lambda: bound.ainvoke(messages)), http.aclose
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        answer: str
        score: str

    async def judge(state: State) -> State:
        return {"answer": str((await bound.ainvoke(messages)).content)}

    async def read(state: State) -> State:
        return {"score": state["answer"][-3:]}

    graph = StateGraph(State)
    graph.add_node("judge", judge)
    graph.add_node("read", read)
    graph.add_edge(START, "judge")
    graph.add_edge("judge", "read")
    graph.add_edge("read", END)
    app = graph.compile()
    return (lambda: app.ainvoke({})), http.aclose


async def _post(client: Any, url: str) -> Any:
    response = await client.post(url + "/chat/completions", json=BODY)
    return response.json()


async def measure(layer: str, url: str, requests: int) -> float:
    """Milliseconds of CPU per request, 64 in flight, after 64 requests of warm-up."""
    send, close = await one_request(layer, url)
    slots = asyncio.Semaphore(64)

    async def bounded() -> None:
        async with slots:
            await send()

    await asyncio.gather(*(bounded() for _ in range(64)))
    start = time.process_time()
    await asyncio.gather(*(bounded() for _ in range(requests)))
    spent = time.process_time() - start
    await close()
    return spent / requests * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=",".join(LAYERS))
    ap.add_argument("--url", help=argparse.SUPPRESS)  # a child process: measure --only against this server
    args = ap.parse_args()
    if args.url:
        print(asyncio.run(measure(args.only, args.url, args.requests)))
        return
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()  # type: ignore[union-attr]
        layers = args.only.split(",")
        found: dict[str, list[float]] = {layer: [] for layer in layers}
        for _ in range(args.repeats):
            for layer in layers:
                child = [sys.executable, __file__, "--only", layer, "--url", url, "--requests", str(args.requests)]
                found[layer].append(float(subprocess.run(child, check=True, capture_output=True, text=True).stdout))
        for layer, values in found.items():
            print(f"{layer:12} {statistics.median(values):.2f} ms of CPU per request "
                  f"(median of {len(values)}: {min(values):.2f}-{max(values):.2f})", flush=True)
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
