"""Hidden demand: weather, arrivals and multinomial-logit choice (design §2, "Hidden demand").

    N(m,t) ~ Poisson(λ_m · E(m,t) · G(m,t))
    w(m,k,t) = b(m,k) · F(m,t)^η · min(1, q/φ) · (p/p̄)^(−ε) · E(m,k,t)
    P(k) = w_k / (w_0 + Σ_j w_j);  sales = min(choices, stock)

Common random numbers: a day's weather and every machine's arrivals come from streams
keyed by (seed, day) and (seed, machine, day) only, so two agents on one seed face the
same weather and the same customers. Each customer also carries a uniform "taste" draw
from a (seed, day) stream, so the same customers meet the same draws under every
policy; only the listings they find differ.

G is a mean-1 gamma AR(1) shock: G_t = ρ·G_{t−1} + (1−ρ)·X_t with X ~ Gamma(r', 1/r')
and r' = r(1−ρ)/(1+ρ), which keeps the marginal mean 1, the marginal variance 1/r
(shape r = 2.74) and the lag-1 autocorrelation ρ = 0.21.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._streams import keyed_rng
from ._calendar import CLIMATE, DayInfo
from ._world import MACHINE_CAPACITY, HiddenDemand

SHAPE_R = 2.74
PERSISTENCE_RHO = 0.21
FILL_ETA = 0.5
DEPTH_PHI = 5.0
HEAT_PIVOT_C = 22.0

_WEATHER, _ARRIVALS, _CHOICE, _DELIVERY = 1, 2, 3, 4


def stream(seed: int, tag: int, key: int) -> np.random.Generator:
    """An independent random stream for (seed, tag, key), the basis of common random
    numbers: ``np.random.default_rng([seed, tag, key])``, seeded faster (``keyed_rng``)."""
    return keyed_rng((seed, tag), key)


@dataclass(frozen=True, slots=True)
class Weather:
    temperature: float   # °C, daily mean
    rain: bool

    def describe(self) -> str:
        return f"{self.temperature:.0f}°C, {'rain' if self.rain else 'dry'}"


def weather(seed: int, day: int, info: DayInfo) -> Weather:
    """Today's Shanghai weather, drawn from the monthly climatology."""
    mean, sd, p_rain = CLIMATE[info.date.month]
    rng = stream(seed, _WEATHER, day)
    temperature = float(rng.normal(mean, sd))
    return Weather(temperature=round(temperature, 1), rain=bool(rng.random() < p_rain))


# (weekend, holiday, rain) footfall multipliers per site type
_SITE_DAY = {
    "workplace": (0.55, 0.35, 0.93),
    "campus": (0.75, 0.50, 0.95),
    "residential": (1.15, 1.25, 0.93),
    "commercial": (1.30, 1.45, 0.72),
    "office": (0.12, 0.08, 0.93),
}
CAMPUS_BREAK = 0.20


def site_multiplier(site_type: str, info: DayInfo, wx: Weather) -> float:
    """E(m, t): weekday/holiday/break/rain footfall of a site type."""
    weekend, holiday, rain = _SITE_DAY[site_type]
    e = holiday if info.holiday else (weekend if info.weekend else 1.0)
    if site_type == "campus" and info.campus_break:
        e = min(e, CAMPUS_BREAK)
    return e * (rain if wx.rain else 1.0)


def product_multiplier(heat: np.ndarray, wx: Weather) -> np.ndarray:
    """E(m, k, t): hot days lift cold drinks, cold days lift noodles and chocolate."""
    return np.exp(heat * (wx.temperature - HEAT_PIVOT_C) / 10.0)


class Arrivals:
    """The policy-independent purchase attempts N(m, t) of every machine, day by day."""

    def __init__(self, seed: int, hidden: HiddenDemand) -> None:
        self._seed = seed
        self._hidden = hidden
        n_m = len(hidden.volume)
        self._r_innov = SHAPE_R * (1 - PERSISTENCE_RHO) / (1 + PERSISTENCE_RHO)
        rng = stream(seed, _ARRIVALS, 0)
        self._shock = rng.gamma(SHAPE_R, 1.0 / SHAPE_R, n_m)
        self._day = 0

    def draw(self, day: int, multipliers: np.ndarray) -> np.ndarray:
        """Attempts per machine on ``day`` (days must be drawn in order 1, 2, …)."""
        if day != self._day + 1:
            raise ValueError(f"arrivals drawn out of order: day {day} after {self._day}")
        self._day = day
        rng = stream(self._seed, _ARRIVALS, day)
        innov = rng.gamma(self._r_innov, 1.0 / self._r_innov, len(self._shock))
        self._shock = PERSISTENCE_RHO * self._shock + (1 - PERSISTENCE_RHO) * innov
        attempts: np.ndarray = rng.poisson(self._hidden.volume * multipliers * self._shock)
        return attempts


def attraction(
    hidden: HiddenDemand,
    machine: int | np.ndarray,
    products: np.ndarray,
    units: np.ndarray,
    prices: np.ndarray,
    ref_prices: np.ndarray,
    fill: float | np.ndarray,
    heat_mult: np.ndarray,
) -> np.ndarray:
    """w(m,k,t) of each listing: b · F^η · min(1, q/φ) · (p/p̄)^(−ε) · E.

    ``machine`` and ``fill`` are one machine's, or one per listing."""
    weights: np.ndarray = (
        hidden.attraction[machine, products]
        * fill ** FILL_ETA
        * np.minimum(1.0, units / DEPTH_PHI)
        * (prices / ref_prices) ** (-hidden.elasticity[machine])
        * heat_mult[products]
    )
    return weights


def choice_probabilities(
    hidden: HiddenDemand,
    machine: int,
    products: np.ndarray,
    units: np.ndarray,
    prices: np.ndarray,
    ref_prices: np.ndarray,
    fill: float,
    heat_mult: np.ndarray,
) -> np.ndarray:
    """MNL purchase probabilities of each listing (the no-purchase share is the rest)."""
    w = attraction(hidden, machine, products, units, prices, ref_prices, fill, heat_mult)
    probabilities: np.ndarray = w / (hidden.no_purchase[machine] + w.sum())
    return probabilities


def day_sales(
    hidden: HiddenDemand,
    machines: np.ndarray,
    products: np.ndarray,
    units: np.ndarray,
    prices: np.ndarray,
    ref_prices: np.ndarray,
    heat_mult: np.ndarray,
    attempts: np.ndarray,
    draws: np.ndarray,
    fill: np.ndarray | None = None,
) -> np.ndarray:
    """Units sold per listing today, for every machine at once: each machine's customers
    choose among its listings by ``choice_probabilities`` (a draw past them all buys
    nothing) and demand beyond the stock is lost; one pass over all machines.

    Listings come grouped by machine, in machine order, with stock on the shelf;
    ``draws`` are the day's customer draws in machine order, ``attempts`` per machine;
    ``fill``: each listing's machine fill (default: its machine's units over capacity;
    an arena's site holds several operators' machines, each with its own fill).
    """
    n_m = len(attempts)
    if fill is None:
        stock = np.bincount(machines, weights=units, minlength=n_m)
        fill = np.minimum(1.0, stock / MACHINE_CAPACITY)[machines]
    w = attraction(hidden, machines, products, units, prices, ref_prices, fill, heat_mult)
    probs = w / (hidden.no_purchase + np.bincount(machines, weights=w, minlength=n_m))[machines]
    # machine m's listings hold [first_m, end_m) of the cumulative probabilities: its
    # customer with draw u picks the first listing whose cumulative share passes
    # (share before first_m) + u, and nothing at all if that is past the machine's last
    # share. The buyers' picks are then counted at once: listing j is chosen by the
    # points x with cum[j-1] <= x < cum[j] (the same comparisons as one search per
    # customer, counted in order instead).
    cum = np.cumsum(probs)
    per_machine = np.bincount(machines, minlength=n_m)
    end = np.cumsum(per_machine)
    with_cum = np.concatenate(([0.0], cum))
    whose = np.repeat(np.arange(n_m), attempts)
    x = with_cum[end - per_machine][whose] + draws
    x = np.sort(x[x < with_cum[end][whose]])
    chosen = np.diff(np.searchsorted(x, cum, side="left"), prepend=0)
    sold: np.ndarray = np.minimum(chosen, units)
    return sold


def customer_draws(seed: int, day: int, attempts: np.ndarray) -> np.ndarray:
    """One uniform "taste" draw per purchase attempt for ``day``: machine 0's customers
    first, then machine 1's, and so on (``attempts`` per machine).

    Drawn from a stream keyed by (seed, day) in machine order, and the attempts are
    policy-independent, so a machine's customers are the same under every policy; only
    what they choose depends on the listings they find.
    """
    return stream(seed, _CHOICE, day).random(int(attempts.sum()))


def delivery_delay(seed: int, order_seq: int) -> int:
    """Extra days an order is late: 0 usually, 1 about one order in eight."""
    return int(stream(seed, _DELIVERY, order_seq).random() < 0.125)

