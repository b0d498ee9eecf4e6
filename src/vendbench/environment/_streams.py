"""Keyed random streams, seeded a block of keys at a time.

``keyed_rng((a, b), key)`` is the generator ``np.random.default_rng([a, b, key])``, bit
for bit. Building that one from scratch hashes its seed in numpy's ``SeedSequence``
(9 µs warm, ~28 µs inside an episode, where the simulator asks for a few per day).
Here the hash runs in numpy over 128 keys at once (~0.6 µs a key) and is cached per
block, and each generator is built from its four ready state words (~0.8 µs).

The hash is numpy's ``SeedSequence`` algorithm (pool of four 32-bit words, then
``generate_state(4, uint64)``), written over arrays; PCG64 itself is seeded from those
words by numpy. ``tests/environment/test_streams.py`` holds it to ``default_rng`` on
keys across blocks and seeds past 2**32 and 2**64.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

BLOCK = 128
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875          # numpy's SeedSequence constants
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = np.uint32(0xCA01F9DD), np.uint32(0x4973F715)
_MASK = 0xFFFFFFFF
_SHIFT = np.uint32(16)


def keyed_rng(prefix: tuple[int, ...], key: int) -> np.random.Generator:
    """``np.random.default_rng([*prefix, key])`` for non-negative integers."""
    if key < 0 or key > _MASK or any(p < 0 for p in prefix):
        return np.random.default_rng([*prefix, key])
    block, i = divmod(key, BLOCK)
    # PCG64 takes any ISeedSequence (numpy's stubs name only its own)
    ready = _Ready(_state_words(prefix, block)[i])
    return np.random.Generator(np.random.PCG64(ready))      # type: ignore[arg-type]


class _Ready(ISeedSequence):
    """A seed sequence whose state words are already computed."""

    __slots__ = ("_words",)

    def __init__(self, words: np.ndarray) -> None:
        self._words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != 4 or dtype is not np.uint64:      # what PCG64 asks for, only
            raise ValueError("precomputed for PCG64: 4 uint64 words")
        return self._words.copy()


@lru_cache(maxsize=512)
def _state_words(prefix: tuple[int, ...], block: int) -> np.ndarray:
    """``SeedSequence([*prefix, key]).generate_state(4, np.uint64)`` for the keys of
    ``block``, one row each (BLOCK × 4)."""
    keys = np.arange(block * BLOCK, (block + 1) * BLOCK, dtype=np.uint32)
    entropy = [np.full(BLOCK, w, np.uint32) for p in prefix for w in _words(p)] + [keys]
    hashmix = _hasher(_INIT_A, _MULT_A)

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r: np.ndarray = _MIX_L * x - _MIX_R * y
        mixed: np.ndarray = r ^ (r >> _SHIFT)
        return mixed

    zero = np.zeros(BLOCK, np.uint32)
    pool = [hashmix(entropy[i] if i < len(entropy) else zero) for i in range(4)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    for extra in entropy[4:]:
        for dst in range(4):
            pool[dst] = mix(pool[dst], hashmix(extra))
    out = np.empty((BLOCK, 8), np.uint32)
    state_hash = _hasher(_INIT_B, _MULT_B)          # generate_state's pass over the pool
    for i in range(8):
        out[:, i] = state_hash(pool[i % 4])
    words = out.view("<u8").astype(np.uint64)        # little-endian pairs, as numpy's view
    words.setflags(write=False)
    return words


def _hasher(init: int, mult: int) -> Callable[[np.ndarray], np.ndarray]:
    """SeedSequence's hash step: each call xors in the running constant, advances it
    (× ``mult``), multiplies by it and folds the high half down."""
    const = init

    def hash_(value: np.ndarray) -> np.ndarray:
        nonlocal const
        value = value ^ np.uint32(const)
        const = (const * mult) & _MASK
        value = value * np.uint32(const)
        return value ^ (value >> _SHIFT)
    return hash_


def _words(n: int) -> list[int]:
    """An integer as numpy's seed coercion splits it: 32-bit words, least first."""
    words = [n & _MASK]
    while n > _MASK:
        n >>= 32
        words.append(n & _MASK)
    return words
