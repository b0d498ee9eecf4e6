"""The network world's hidden demand model (never visible through a tool).

A machine's customers choose by multinomial logit among the products it has in stock
and leaving without buying. A product's attraction is its popularity, times the
location's preference for its kind, the season for cold drinks, and the share of
shoppers whose willingness to pay reaches its price: willingness to pay is lognormal
around the product's reference price, wider where a location is less price-sensitive.
So demand falls steeply well above the reference price and nobody buys at many times
it, and the price that earns most lies between the unit cost and a few times it.

Identical facings in one machine share one pool (more slots buy capacity, not
customers): a pool is one alternative, priced at its cheapest facing with stock, and
customers arrive one at a time, so a customer pays the price that drew them; when a
facing empties, the next customer sees the next facing's price. In an arena the pool
holds every operator's facings of the product at the location; a customer facing
several operators at the same front price picks one of them at random.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

_SQRT2 = math.sqrt(2.0)


@dataclass(eq=False)          # facings are compared by identity
class Facing:
    """A slot with stock as a customer sees it tonight: its units and price (cents)."""

    units: int
    price: int
    owner: int = 0            # whose machine (an arena's operator; alone, always 0)


def willing(price: float, reference: float, sigma: float) -> float:
    """The share of shoppers whose willingness to pay reaches ``price``."""
    if price <= 0:
        return 1.0
    return 0.5 * math.erfc(math.log(price / reference) / (sigma * _SQRT2))


def sigma(eco: Any, loc: Any) -> float:
    """The spread (log SD) of willingness to pay at ``loc``."""
    spread: float = eco["demand"]["wtp_sd"] / loc.sensitivity
    return spread


def attraction(eco: Any, prod: Any, loc: Any, price: float, season: float = 1.0) -> float:
    """The logit attraction of ``prod`` at ``price`` (cents) at ``loc``."""
    dem = eco["demand"]
    pref = dem["pref_boost"] if prod.kind in loc.favours else 1.0
    seasonal = season if prod.kind == "cold" else 1.0
    weight: float = prod.popularity * pref * seasonal * willing(price, prod.retail,
                                                                 sigma(eco, loc))
    return weight


def shares(eco: Any, loc: Any, offer: Mapping[str, float], season: float = 1.0
           ) -> dict[str, float]:
    """Each product's expected share of a machine's customers, for ``offer`` (product ->
    price in cents) at ``loc``."""
    w = {p: attraction(eco, eco.products[p], loc, price, season) for p, price in offer.items()}
    total = eco["demand"]["no_purchase"] + sum(w.values())
    return {p: v / total for p, v in w.items()}


def pools(facings: Sequence[tuple[Any, Facing]]) -> dict[str, list[Facing]]:
    """Facings (slot, facing), cheapest first, as ``serve`` takes them: identical
    products are one pool, in the order given."""
    out: dict[str, list[Facing]] = {}
    for slot, facing in facings:
        out.setdefault(slot.product or "", []).append(facing)
    return out


def serve(eco: Any, loc: Any, pools: dict[str, list[Any]], draws: Sequence[float],
          season: float) -> dict[str, tuple[int, int]]:
    """Sell to one machine's customers, one at a time.

    Args:
        pools: product -> its facings with stock (objects with ``units`` and ``price``),
            cheapest first; units are taken from them in place.
        draws: one uniform number in [0, 1) per customer, in order of arrival.

    Returns:
        product -> (units sold, revenue in cents).
    """
    sold = {p: (0, 0) for p in pools}
    live = {p: list(f) for p, f in pools.items() if f}
    weight: dict[str, float] = {}           # a product's attraction at its front facing
    names: list[str] = []
    cum: list[float] = []
    for u in draws:
        if not live:
            break
        if not names:                       # the offer changed: recompute the choice
            names = sorted(live)
            for p in names:
                if p not in weight:
                    weight[p] = attraction(eco, eco.products[p], loc, live[p][0].price, season)
            cum = list(accumulate([eco["demand"]["no_purchase"]] + [weight[p] for p in names]))
        pick = bisect_right(cum, u * cum[-1])
        if pick == 0 or pick > len(names):
            continue                        # leaves without buying
        product = names[pick - 1]
        pool = live[product]
        facing = pool[0]
        if len(pool) > 1 and pool[1].price == facing.price:
            # owners tied at the front price: the customer picks one of them at random
            # (the rest of their own draw, so nothing else moves)
            firsts = list({f.owner: f for f in reversed(pool)
                           if f.price == facing.price}.values())
            if len(firsts) > 1:
                firsts.sort(key=pool.index)
                lo = cum[pick - 1]
                rest = (u * cum[-1] - lo) / (cum[pick] - lo)
                facing = firsts[min(int(rest * len(firsts)), len(firsts) - 1)]
        facing.units -= 1
        units, revenue = sold[product]
        sold[product] = (units + 1, revenue + facing.price)
        if facing.units == 0:
            pool.remove(facing)
            del weight[product]             # its next facing (if any) may be dearer
            if not live[product]:
                del live[product]
            names = []
    return sold
