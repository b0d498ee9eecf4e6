"""A tool's arguments, once for every world (design §21, §26.1): the strict model every
tool's arguments subclass (``Args``), the OpenAI function-calling schema built from it
(``openai_schema``), and the JSON an agent sent parsed and validated into it, or one
line that says what is wrong in words the agent can act on."""

from __future__ import annotations

import json
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .._text import no_surrogates

M = TypeVar("M", bound=BaseModel)


class Args(BaseModel):
    """A tool's arguments: strict (no "5" for 5, no 2.0 for an integer), no unknown keys,
    so every malformed call is caught before it touches the world."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ToolSpec(NamedTuple):
    """A tool as a world declares it: its arguments' model, what it does, and its kind
    (AutoVend tags descriptions with it: query, remote, physical, memory)."""

    model: type[BaseModel]
    text: str
    kind: str = ""


def openai_schema(name: str, description: str, model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI function-calling schema of a tool, with $refs inlined and titles dropped
    (servers that cannot follow a $ref read it too)."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return clean(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: clean(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    params = clean(raw)
    params.setdefault("properties", {})
    params["additionalProperties"] = False
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": params}}


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


def canonical(arguments: Any) -> str:
    """Arguments as one text whatever their form (a dict, or a model's JSON string)."""
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return text
    try:
        return json.dumps(arguments, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(arguments)
