"""``baseline/oracle``: plans with the hidden demand parameters (design §2.3).

It knows every product's attraction at every machine, the site elasticities and the
calendar and climate multipliers. Every four weeks it re-plans each machine: over a
grid of assortment sizes and price levels it maximises expected daily gross profit
minus the visit fees that the resulting sales volume forces, then lists that
assortment at those prices and forecasts demand without noise. It acts only
through the agent tools: an upper reference, not a way around the rules.
"""

from __future__ import annotations

from typing import Any

import datetime as dt

import numpy as np

from .. import _demand as demand
from .._calendar import CLIMATE, day_info
from .._world import World
from ._books import Call
from ._replenish import CAPACITY, MAX_CYCLE, MAX_LISTINGS, MachineView, ReplenishmentPolicy

FILL_ASSUMED = 0.8
VISIT_FEE = 35.0
REPLAN_EVERY = 28
SIZES = (16, 20, 24, 28, 32, 36, MAX_LISTINGS)
PRICE_LEVELS = (1.0, 1.1, 1.2, 1.3, 1.45, 1.6)


class OraclePolicy(ReplenishmentPolicy):
    name = "baseline/oracle"

    def __init__(self, world: World) -> None:
        super().__init__()
        self.world = world
        self._m = {mc.id: i for i, mc in enumerate(world.machines)}
        self._k = world.product_index()
        self._pid = [p.id for p in world.products]
        self._cost = np.array([p.unit_cost for p in world.products], dtype=float) / 100
        self._ref = np.array([p.ref_price for p in world.products], dtype=float) / 100
        eps = world.hidden.elasticity[:, None]
        # the profit-maximising price of a small-share MNL product: p* = ε c / (ε − 1)
        self._p_star = eps * self._cost[None, :] / (eps - 1)
        self._plan: dict[str, dict[str, tuple[float, float]]] = {}   # mid -> pid -> (price, rate)
        self._planned_on = -REPLAN_EVERY

    def _conditions(self, machine: int, days: int = 30) -> tuple[float, np.ndarray]:
        """Expected footfall E(m, t) and product weather lift over the coming days."""
        site = self.world.machines[machine].site_type
        footfall, heat = 0.0, np.zeros(len(self._cost))
        for i in range(days):
            info = day_info(self.today + dt.timedelta(days=i))
            temp, _, p_rain = CLIMATE[info.date.month]
            for rain, p in ((False, 1 - p_rain), (True, p_rain)):
                footfall += p * demand.site_multiplier(site, info, demand.Weather(temp, rain))
            heat += demand.product_multiplier(self.world.hidden.heat, demand.Weather(temp, False))
        return footfall / days, heat / days

    def _plan_machine(self, i: int) -> dict[str, tuple[float, float]]:
        h = self.world.hidden
        footfall, heat = self._conditions(i)
        volume = h.volume[i] * footfall
        life = np.array([p.shelf_life for p in self.world.products])
        best, best_value = {}, -np.inf
        for level in PRICE_LEVELS:
            price = np.round(np.clip(self._p_star[i] * level, 0.5 * self._ref, 2.0 * self._ref), 1)
            w = (h.attraction[i] * FILL_ASSUMED ** demand.FILL_ETA
                 * (price / self._ref) ** (-h.elasticity[i]) * heat)
            order = np.argsort(-(w * (price - self._cost)))
            for size in SIZES:
                top = order[:size]
                share = w[top] / (h.no_purchase[i] + w[top].sum())
                rate = volume * share
                # a listing selling under a unit a week would mostly expire (30-day goods)
                if np.any((life[top] <= 30) & (rate < 0.15)):
                    continue
                units = rate.sum()
                cycle = max(2.0, min(MAX_CYCLE, 0.8 * CAPACITY / max(units, 1e-9)))
                value = float((rate * (price[top] - self._cost[top])).sum()) - VISIT_FEE / cycle
                if value > best_value:
                    best_value = value
                    best = {self._pid[k]: (float(price[k]), float(r)) for k, r in zip(top, rate)}
        return best

    def _replan(self) -> None:
        self._planned_on = self.day
        for m in self.machines.values():
            plan = self._plan[m.mid] = self._plan_machine(self._m[m.mid])
            if not m.rates:
                continue
            m.planned_drops = [p for p in m.rates if p not in plan]
            for pid, (price, rate) in plan.items():
                if pid not in m.rates:
                    m.planned_adds.append(pid)
            self._apply(m)

    def _apply(self, m: MachineView) -> None:
        for pid, (price, rate) in self._plan[m.mid].items():
            m.rates[pid], m.prices[pid] = rate, price

    # -- hooks ---------------------------------------------------------------------------
    def initial_assortment(self, m: MachineView) -> list[str]:
        if m.mid not in self._plan:
            self._plan[m.mid] = self._plan_machine(self._m[m.mid])
            self._planned_on = self.day
        return list(self._plan[m.mid])

    def prior_rate(self, m: MachineView, pid: str) -> float:
        return self._plan[m.mid][pid][1]

    def setup(self, call: Call) -> None:
        super().setup(call)
        for m in self.machines.values():
            self._apply(m)

    def review(self, call: Call, m: MachineView, shelf: dict[str, Any],
               sold30: dict[str, int],
               prices: list[dict[str, Any]]) -> None:
        if self.day - self._planned_on >= REPLAN_EVERY:
            self._replan()
