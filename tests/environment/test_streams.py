"""Keyed random streams: ``keyed_rng`` is numpy's ``default_rng([*prefix, key])``, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from vendbench.environment._streams import BLOCK, keyed_rng


@pytest.mark.parametrize("prefix", [(0, 1), (1, 2), (7, 3), (2**32 - 1, 4), (2**32, 2),
                                    (2**40 + 5, 1), (2**64 + 3, 3), (5,), (1, 2, 3)])
def test_a_keyed_stream_is_default_rng_of_the_same_words(prefix):
    for key in (0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 365, 5 * BLOCK + 17):
        fast, reference = keyed_rng(prefix, key), np.random.default_rng([*prefix, key])
        assert fast.bit_generator.state == reference.bit_generator.state, (prefix, key)
        assert fast.random(3).tolist() == reference.random(3).tolist()


def test_keys_outside_the_blocks_fall_back_to_default_rng():
    for key in (2**32, 2**40):
        assert keyed_rng((1, 2), key).bit_generator.state == \
            np.random.default_rng([1, 2, key]).bit_generator.state


def test_each_call_is_a_fresh_generator():
    first = keyed_rng((3, 1), 10)
    first.random(5)
    again = keyed_rng((3, 1), 10)
    assert again.random() == np.random.default_rng([3, 1, 10]).random()
