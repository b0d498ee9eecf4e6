"""Small wording helpers every layer may use."""

from __future__ import annotations

import re
import unicodedata
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


def printable(text: str, keep: str = "") -> str:
    """``text`` as plain text a terminal or a page cannot take for anything else: control
    and format characters (escape sequences, bidi overrides, zero-width marks), line and
    paragraph separators, private and unassigned code points shown as their escapes
    (``\\x1b``, ``\\u202e``); the characters in ``keep`` (a new line, say) stay."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch if ch in keep or ch == " " or unicodedata.category(ch)[0] not in "CZ"
                   else f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
                   for ch in text)

