"""The network world's economy, read from ``network.toml`` (every value in one file)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

CONFIG = Path(__file__).with_name("network.toml")


@dataclass(frozen=True)
class Location:
    id: str
    name: str
    volume: float
    sensitivity: float
    favours: tuple[str, ...]


@dataclass(frozen=True)
class Product:
    id: str
    machine: str          # "snack", "drinks", or "none" (cannot be stocked)
    size: str             # "small", "large", "can"
    kind: str
    retail: int           # reference retail price, cents
    cost: int             # base unit cost, cents
    popularity: float
    shelf_life: int       # days a delivered unit can be sold (its last day included)


@dataclass(frozen=True)
class Supplier:
    id: str
    name: str
    email: str
    keywords: tuple[str, ...]
    products: tuple[str, ...]
    markup: float
    lead_days: int
    delay_chance: float
    short_chance: float
    vanishes_on: int | None = None
    insolvent_on: int | None = None


@dataclass(frozen=True)
class Channel:
    channel: str
    cost: int
    days: int
    bonus: float
    uses: int
    penalty: float


@dataclass(frozen=True)
class Economy:
    raw: dict[str, Any]
    locations: tuple[Location, ...]
    products: dict[str, Product]
    suppliers: dict[str, Supplier]
    channels: dict[str, Channel]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]


@lru_cache(maxsize=4)
def load(path: str | None = None) -> Economy:
    raw = tomllib.loads(Path(path or CONFIG).read_text())
    return Economy(
        raw,
        tuple(Location(d["id"], d["name"], d["volume"], d["sensitivity"], tuple(d["favours"]))
              for d in raw["locations"]),
        {d["id"]: Product(**d) for d in raw["products"]},
        {d["id"]: Supplier(**{**d, "keywords": tuple(d["keywords"]),
                              "products": tuple(d["products"])}) for d in raw["suppliers"]},
        {d["channel"]: Channel(**d) for d in raw["marketing"]})
