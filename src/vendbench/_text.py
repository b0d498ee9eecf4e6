"""Small wording helpers every layer may use."""

from __future__ import annotations

import re
from typing import Any


def days(n: int | None) -> str:
    """``1 day``, ``30 days``."""
    return f"{n} day" if n == 1 else f"{n} days"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 trial``, ``3 trials`` (``plural`` where adding an s is wrong)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def no_surrogates(obj: Any) -> Any:
    """``obj`` (parsed JSON) with every lone UTF-16 surrogate replaced by U+FFFD.

    JSON may escape half of a character (``"\\ud800"``); Python then holds a string that
    UTF-8 cannot encode, and the next request, row or page that carries it fails on this
    machine. Text a model sends is cleaned where it is parsed, so nothing after it meets
    one."""
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, dict):
        return {no_surrogates(k): no_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [no_surrogates(v) for v in obj]
    return obj
