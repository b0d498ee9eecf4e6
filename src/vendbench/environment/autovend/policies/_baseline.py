"""``baseline/order-up-to``: the paper's rule-based inventory control (design §2.3).

It sees only what an agent sees. Beliefs: 30-day rolling demand per listing, shrunk
towards a prior for new listings; weak sellers are dropped and untried SKUs tried
(preferring what sells at machines of the same site type); local gross-profit price
trials move one price at a time by 10 % and keep the move only if a week's gross
profit improves.
"""

from __future__ import annotations

from typing import Any

import bisect
import hashlib
import itertools
import statistics

from ._books import Call
from ._replenish import MAX_LISTINGS, MachineView, ReplenishmentPolicy

PRIOR_DAYS = 3.0          # weight of the prior rate, in days of observation
TRIAL_STEP = 0.10
TRIAL_DAYS = 7
TRIAL_COOLDOWN = 21
DROP_AFTER_DAYS = 10
DROP_BELOW = 0.7
PEER_PICKS = 3


class OrderUpToPolicy(ReplenishmentPolicy):
    name = "baseline/order-up-to"

    def __init__(self) -> None:
        super().__init__()
        self.tried: dict[str, set[str]] = {}
        self.trials: dict[tuple[str, str], dict[str, Any]] = {}
        self.last_trial: dict[tuple[str, str], int] = {}
        self.next_direction: dict[tuple[str, str], int] = {}
        self.gp_rate: dict[str, dict[str, float]] = {}   # machine -> CNY/day per listing
        self.explore_order: dict[str, list[str]] = {}
        self._ranks: dict[str, dict[str, bytes]] = {}       # key -> product -> its rank
        self._explored: dict[str, int] = {}   # machine -> length of its tried explore_order prefix
        self._peers: dict[str, list[MachineView]] = {}   # machine -> others of its site type

    # -- what to list ----------------------------------------------------------------
    def initial_assortment(self, m: MachineView) -> list[str]:
        """Two SKUs per subcategory: one shared by the site type, one of the machine's own."""
        by_sub: dict[str, list[str]] = {}
        for pid, sku in self.books.catalog.items():
            by_sub.setdefault(sku.subcategory, []).append(pid)
        site, own_rank = self.ranks(m.site), self.ranks(m.mid)
        picks = []
        for sub, pids in sorted(by_sub.items()):
            shared = min(pids, key=site.__getitem__)
            own = min((p for p in pids if p != shared), key=own_rank.__getitem__)
            picks += [shared, own]
        self.tried[m.mid] = set(picks)
        return picks

    def ranks(self, key: str) -> dict[str, bytes]:
        """Each catalog product's fixed pseudo-random rank for ``key`` (a site or a machine)."""
        if key not in self._ranks:
            prefix = hashlib.blake2s(f"{key}/".encode(), digest_size=8)
            ranks = self._ranks[key] = {}
            for p in self.books.catalog:     # blake2s of "key/product", prefix hashed once
                h = prefix.copy()
                h.update(p.encode())
                ranks[p] = h.digest()
        return self._ranks[key]

    def prior_rate(self, m: MachineView, pid: str) -> float:
        """The same for every product: 0.7 × the median rate of the machine's listings."""
        return _prior(sorted([r for p, r in m.rates.items() if p in m.listed]))

    # -- learning at a visit -------------------------------------------------------------
    def review(self, call: Call, m: MachineView, shelf: dict[str, Any],
               sold30: dict[str, int],
               prices: list[dict[str, Any]]) -> None:
        gp = self.gp_rate.setdefault(m.mid, {})
        rates, listed, catalog = m.rates, m.listed, self.books.catalog
        known = sorted([r for p, r in rates.items() if p in listed])   # kept sorted below
        day, price = self.day, m.prices
        for pid, old in rates.items():         # values change, keys do not
            since = listed.get(pid)
            if since is None:
                continue
            days = day - since if day - since < 30 else 30
            prior = _prior(known) if days < 7 else old
            rate = rates[pid] = (sold30.get(pid, 0) + prior * PRIOR_DAYS) / (days + PRIOR_DAYS)
            del known[bisect.bisect_left(known, old)]
            bisect.insort(known, rate)
            gp[pid] = rate * (price[pid] - catalog[pid].cost)
        self._price_trials(m, shelf)
        self._assortment(m)

    def _price_trials(self, m: MachineView, shelf: dict[str, Any]) -> None:
        for key in [k for k in self.trials if k[0] == m.mid]:     # this machine's trials
            pid, trial = key[1], self.trials[key]
            r = shelf.get(pid)
            if r is None or self.day - trial["since"] < TRIAL_DAYS or pid not in m.prices:
                continue
            gp = r["sold_7d"] * (m.prices[pid] - self.books.catalog[pid].cost) / 7
            if gp < trial["base_gp"]:
                m.prices[pid] = trial["base_price"]          # the move did not pay: undo it
                self.next_direction[key] = -trial["direction"]
            else:
                self.next_direction[key] = trial["direction"]
            del self.trials[key]
            self.last_trial[key] = self.day
        started = sum(1 for (mid, _) in self.trials if mid == m.mid)
        if started >= 3:
            return
        listed, since = m.listed, self.day - 14
        ranked = sorted((p for p, r in shelf.items() if r["sold_7d"] >= 5 and p in m.prices
                         and listed.get(p, since + 1) <= since),
                        key=lambda p: -m.rates.get(p, 0))
        for pid in ranked:       # the fastest sellers listed a fortnight, selling 5+ a week
            key = (m.mid, pid)
            if started >= 3:
                break
            if key in self.trials or self.day - self.last_trial.get(key, -99) < TRIAL_COOLDOWN:
                continue
            sku = self.books.catalog[pid]
            direction = self.next_direction.get(key, -1)
            price = round(m.prices[pid] * (1 + direction * TRIAL_STEP), 1)
            price = min(2.0 * sku.ref, max(0.5 * sku.ref, price))
            if price <= sku.cost or price == m.prices[pid]:
                continue
            self.trials[key] = {"since": self.day, "base_price": m.prices[pid],
                                "direction": direction,
                                "base_gp": shelf[pid]["sold_7d"] * (m.prices[pid] - sku.cost) / 7}
            m.prices[pid] = price
            started += 1

    def _assortment(self, m: MachineView) -> None:
        gp = self.gp_rate[m.mid]
        mature = {p: gp[p] for p in m.rates
                  if p in m.listed and self.day - m.listed[p] >= DROP_AFTER_DAYS}
        if len(mature) < 8:
            return
        median = statistics.median(mature.values())
        weak = sorted((p for p, g in mature.items() if g < DROP_BELOW * median),
                      key=lambda p: mature[p])[:5]
        m.planned_drops = weak
        room = MAX_LISTINGS - len(m.rates) + len(weak)
        prior = self.prior_rate(m, "")     # new listings are not yet in m.listed
        for pid in self._candidates(m, max(0, min(room, len(weak) + 1))):
            m.rates[pid] = prior
            m.prices[pid] = self.books.catalog[pid].ref
            m.planned_adds.append(pid)
            self.tried[m.mid].add(pid)

    def _candidates(self, m: MachineView, n: int) -> list[str]:
        """Up to ``n`` untried SKUs: first those selling well at the same site type (at
        most 3), then fresh ones."""
        if n == 0:
            return []
        tried = self.tried[m.mid]
        peers: dict[str, float] = {}
        peers_of = self._peers.get(m.mid)
        if peers_of is None:
            peers_of = self._peers[m.mid] = [o for o in self.machines.values()
                                             if o.site == m.site and o is not m]
        for other in peers_of:
            theirs = self.gp_rate.get(other.mid, {})
            for pid in [p for p in other.rates if p in theirs and p not in tried]:
                peers[pid] = max(theirs[pid], peers.get(pid, 0.0))
        best = sorted(peers, key=lambda p: -peers[p])[:PEER_PICKS]
        if len(best) >= n:
            return best[:n]
        gp_by_sub: dict[str, list[float]] = {}
        mine = self.gp_rate.get(m.mid, {})
        for pid in m.rates:
            if pid in mine:
                sub = self.books.catalog[pid].subcategory
                gp_by_sub.setdefault(sub, []).append(mine[pid])
        good_subs = sorted(gp_by_sub, key=lambda s: -sum(gp_by_sub[s]) / len(gp_by_sub[s]))[:6]
        order = self.explore_order.get(m.mid)
        if order is None:     # a fixed, machine-specific exploration order over the catalog
            order = self.explore_order[m.mid] = sorted(self.books.catalog,
                                                       key=self.ranks(m.mid).__getitem__)
        start = self._explored.get(m.mid, 0)     # everything before it has been tried
        while start < len(order) and order[start] in tried:
            start += 1
        self._explored[m.mid] = start
        catalog = self.books.catalog
        fresh = list(itertools.islice((p for p in itertools.islice(order, start, None)
                                       if p not in tried and catalog[p].subcategory in good_subs),
                                      8))
        return (best + fresh)[:n]


def _prior(known: list[float]) -> float:
    """0.7 × the median of ``known`` (sorted rates), as statistics.median computes it;
    1.2 units a day when nothing is known yet."""
    if not known:
        return 1.2
    mid = len(known) // 2
    return 0.7 * (known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2)
