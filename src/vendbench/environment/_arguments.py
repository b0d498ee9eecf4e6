"""A tool call's arguments, parsed and validated once for every world (SPEC §21): the
JSON an agent sent becomes the tool's pydantic model, or one line that says what is wrong
in words the agent can act on."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .._text import no_surrogates

M = TypeVar("M", bound=BaseModel)


class ArgumentError(ValueError):
    """Arguments that are not a JSON object, or do not fit the tool's model."""


def parse_arguments(arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """The arguments as a dict: a JSON object, or nothing (no arguments)."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ArgumentError(f"arguments are not valid JSON ({exc.msg} at position "
                                f"{exc.pos}); send a JSON object such as {{}}") from None
    if not isinstance(arguments, dict):
        raise ArgumentError(f"arguments must be a JSON object, got {type(arguments).__name__}")
    clean: dict[str, Any] = no_surrogates(arguments)
    return clean


def validate(model: type[M], arguments: dict[str, Any] | str | None) -> M:
    """``arguments`` as ``model``; ArgumentError saying what is wrong otherwise."""
    try:
        return model.model_validate(parse_arguments(arguments))
    except ValidationError as exc:
        raise ArgumentError(f"invalid arguments: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError, prefix: str = "") -> str:
    """Pydantic errors as one line the agent can act on (the first five)."""
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"])
        where = f"{prefix}{loc}" if loc else (prefix.rstrip(".") or "arguments")
        got = err.get("input")
        shown = "" if isinstance(got, dict) else f" (got {got!r:.40})"
        parts.append(f"{where}: {err['msg']}{shown}")
    return "; ".join(parts)
