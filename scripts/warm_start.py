"""Import once, with bytecode writing on, every module a dialeval run or test can import;
then load SmolLM2 once, which dequantizes it into the weight cache.

Why: `make setup` installs without compiling. Compiling every installed file (25,000,
three quarters of them never imported: SDK types, test suites, kubernetes' client) took
57 s; importing what is used writes the bytecode of exactly that, and where
PYTHONDONTWRITEBYTECODE is set, no later process compiles those modules again. Run it
with that variable empty (the Makefile does).

Usage: python scripts/warm_start.py            (imports, then SmolLM2)
       python scripts/warm_start.py --no-model (imports only)
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

# imported inside functions (lazily), so importing dialeval's modules does not reach them
LAZY = [
    "torch", "transformers", "sentence_transformers", "xgrammar", "chromadb",
    "matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.pyplot",
    "langchain_openai", "langchain_anthropic", "langgraph.graph", "openai", "anthropic",
    "pandas", "scipy.stats", "sklearn.metrics", "krippendorff", "nltk.translate.meteor_score",
    "rouge_score.rouge_scorer", "sacrebleu", "tiktoken", "genai_prices", "jinja2", "markdown_it",
    "PIL.Image", "langsmith", "opentelemetry.proto.trace.v1.trace_pb2", "pyarrow.parquet",
    "playwright.sync_api", "pytest", "xdist", "pytest_asyncio", "pytest_timeout",
    "langgraph_api", "langgraph_cli",
]


def dialeval_modules() -> list[str]:
    """Every module of the dialeval package but ``__main__`` (importing it runs the CLI)."""
    import dialeval

    found = pkgutil.walk_packages(dialeval.__path__, prefix="dialeval.")
    return sorted(m.name for m in found if not m.name.endswith("__main__"))


def main() -> int:
    started = time.perf_counter()
    if sys.flags.dont_write_bytecode:
        print("warm_start: PYTHONDONTWRITEBYTECODE is set, so no bytecode is written", file=sys.stderr)
    missing = []
    for name in [*dialeval_modules(), *LAZY]:
        try:
            importlib.import_module(name)
        except ImportError as err:  # an optional library not installed: nothing to compile
            missing.append(f"{name} ({err})")
    print(f"warm_start: {len(sys.modules)} modules imported in {time.perf_counter() - started:.1f} s"
          + (f"; not installed: {', '.join(missing)}" if missing else ""))
    if "--no-model" not in sys.argv:
        from dialeval.models.local_models import load_engine

        engine = load_engine("smollm2")
        print(f"warm_start: SmolLM2 loaded in {engine.load_seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
