"""Import once, with bytecode writing on, every module a dialeval run or test can import,
and load SmolLM2 once, which dequantizes it into the weight cache.

Why: `make setup` installs without compiling. Compiling every installed file (25,000,
three quarters of them never imported: SDK types, test suites, kubernetes' client) took
57 s; importing what is used writes the bytecode of exactly that, and where
PYTHONDONTWRITEBYTECODE is set, no later process compiles those modules again. Run it
with that variable empty (the Makefile does).

Usage: python scripts/warm_start.py model      (torch, transformers and the rest of the
                                               local-model stack; then SmolLM2)
       python scripts/warm_start.py libraries  (dialeval's modules and every other library)
       python scripts/warm_start.py            (both, one after the other)

The Makefile runs the two parts side by side, one core each: 42 s instead of 78 s here.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

# imported inside functions (lazily), so importing dialeval's modules does not reach them
MODEL_STACK = ["torch", "transformers", "sentence_transformers", "xgrammar"]
LAZY = [
    "chromadb", "matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.pyplot",
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


def import_all(names: list[str]) -> None:
    started = time.perf_counter()
    missing = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as err:  # an optional library not installed: nothing to compile
            missing.append(f"{name} ({err})")
        except Exception as err:  # noqa: BLE001  (said on stdout: make setup hides the libraries' warnings on stderr)
            missing.append(f"{name} (failed: {type(err).__name__}: {err})")
    print(f"warm_start: {len(names)} modules imported in {time.perf_counter() - started:.1f} s"
          + (f"; not imported: {', '.join(missing)}" if missing else ""))


def load_smollm2() -> None:
    """Load SmolLM2 once (dequantizing it into the weight cache); a failure is said on stdout
    and does not stop the setup: the first run that needs the model says it again."""
    from dialeval.models.local_models import load_engine

    try:
        engine = load_engine("smollm2")
    except Exception as err:  # noqa: BLE001
        print(f"warm_start: SmolLM2 did not load ({type(err).__name__}: {err}); runs on it will fail the same way")
        return
    print(f"warm_start: SmolLM2 loaded in {engine.load_seconds:.1f} s")


def main(parts: list[str]) -> int:
    if sys.flags.dont_write_bytecode:
        print("warm_start: PYTHONDONTWRITEBYTECODE is set, so no bytecode is written", file=sys.stderr)
    unknown = set(parts) - {"model", "libraries"}
    if unknown:
        print(f"warm_start: unknown part {sorted(unknown)}; the parts are model and libraries", file=sys.stderr)
        return 2
    if not parts or "libraries" in parts:
        import_all([*dialeval_modules(), *LAZY])
    if not parts or "model" in parts:
        import_all(MODEL_STACK)
        load_smollm2()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
