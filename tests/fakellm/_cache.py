"""Emulated provider prompt caches, over a request cut into segments.

A request is a list of segments in the order the provider reads them (tool schemas,
system prompt, messages or content blocks), each with its text, its token count and
whether the client marked it as a cache breakpoint.

* OpenAI style (also Gemini and DeepSeek): the longest prefix of an earlier request is
  read from the cache, if it is at least ``min_tokens`` (1,024) long, in 128-token steps;
  every request's prefixes are cached; writes cost nothing extra and are not reported.
* Anthropic style: only prefixes that end at a marked segment are written (each at least
  ``min_tokens``); a request reads the longest written prefix that ends at a marked
  segment or up to 20 segments before one; what lies between that and its last marked
  segment is written (``cache_creation_input_tokens``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

LOOKBACK = 20           # Anthropic: segments looked back before each breakpoint


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    tokens: int
    marked: bool = False


class PrefixCache:
    def __init__(self, style: str, min_tokens: int = 1024) -> None:
        if style not in ("openai", "anthropic"):
            raise ValueError(style)
        self.style, self.min_tokens = style, min_tokens
        self._stored: dict[str | None, set[bytes]] = {}

    def lookup(self, segments: list[Segment], key: str | None = None) -> tuple[int, int]:
        """(tokens read from the cache, tokens written to it) for this request, which is
        then remembered."""
        stored = self._stored.setdefault(key if self.style == "openai" else None, set())
        hashes, ends, h, total = [], [], hashlib.sha256(), 0
        for seg in segments:
            h.update(len(seg.text).to_bytes(8, "little") + seg.text.encode())
            hashes.append(h.copy().digest())
            total += seg.tokens
            ends.append(total)
        if self.style == "openai":
            return self._openai(stored, hashes, ends), 0
        return self._anthropic(stored, segments, hashes, ends)

    def _openai(self, stored: set[bytes], hashes: list[bytes], ends: list[int]) -> int:
        hit = max((i for i, d in enumerate(hashes) if d in stored), default=None)
        stored.update(hashes)
        if hit is None or ends[hit] < self.min_tokens:
            return 0
        return ends[hit] // 128 * 128

    def _anthropic(self, stored: set[bytes], segments: list[Segment], hashes: list[bytes],
                   ends: list[int]) -> tuple[int, int]:
        marks = [i for i, seg in enumerate(segments) if seg.marked]
        looked = {j for b in marks for j in range(max(0, b - LOOKBACK), b + 1)}
        hit = max((j for j in looked if hashes[j] in stored), default=None)
        read = ends[hit] if hit is not None else 0
        written = 0
        for b in marks:
            if ends[b] >= self.min_tokens and hashes[b] not in stored:
                stored.add(hashes[b])
                written = max(written, ends[b] - read)
        return read, written
