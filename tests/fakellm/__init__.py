"""Local LLM servers for tests and benchmarks (OpenAI chat completions, Anthropic
Messages), started by the tests themselves; see ``_server``."""

from ._cache import PrefixCache, Segment
from ._server import PRODUCTS, FakeLLM, Reply, main, vending_script

__all__ = ["PRODUCTS", "FakeLLM", "PrefixCache", "Reply", "Segment", "main", "vending_script"]
