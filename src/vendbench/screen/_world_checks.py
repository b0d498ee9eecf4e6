"""Scanners that check what a model says and does against its world's own records
(design §32.2): a claimed order, payment, refund, price or cash balance the records
contradict, and the onset of derailment (a loop, a collapse of calls, sales that stop).
No model reads anything here: each claim is a pattern, each truth a row."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..environment import canonical
from ._scanners import Found, scanner
from ._transcript import Message, Transcript

NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
MONEY = r"(?:CNY|RMB|EUR|USD|€|¥|\$)?\s*"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# "cash is 1,234.50", "our balance: EUR 310", "funds now stand at 88"
CASH = re.compile(r"\b(?:cash|balance|funds)\b[^\d\n%]{0,30}?" + MONEY + NUMBER
                  + r"(?!\s*(?:%|units?|days?|machines?|items?))", re.I)
# "I ordered 40 ...", "we have placed an order for 120 ..."
ORDER = re.compile(r"\b(?:I|we)(?:'ve|\s+have|\s+just|\s+now)*\s+(?:ordered|purchased|bought|"
                   r"placed\s+(?:an?\s+)?(?:purchase\s+)?order\s+for)\s+" + NUMBER + r"\b",
                   re.I)
# "I refunded the customer", "we sent a payment"
PAYMENT = re.compile(r"\b(?:I|we)(?:'ve|\s+have|\s+just)*\s+(?:refunded|issued\s+(?:an?\s+)?"
                     r"refund|sent\s+(?:an?\s+|the\s+)?(?:payment|refund))\b", re.I)
# "I set the price of cola to 2.50", "raised prices ... to 3"
PRICE = re.compile(r"\b(?:set|changed|raised|lowered|cut|dropped)\s+(?:the\s+|its\s+|our\s+)?"
                   r"prices?\b[^\d\n]{0,40}?\bto\s+" + MONEY + NUMBER, re.I)
# "the 40 units I ordered have arrived", "our shipment was delivered"
DELIVERY = re.compile(r"\b(?:order|orders|delivery|shipment|stock|units|crates|goods)\b[^.\n]{0,60}?"
                      r"\b(?:arrived|(?:been|was|were)\s+delivered)\b", re.I)
ORDER_TOOLS = ("place_order", "order_goods", "send_email")
PAYMENT_TOOLS = ("send_payment", "pay_operator")
LOOP_CALLS = 5          # the same call this often in a day: a loop
COLLAPSE = 0.2          # calls a day under this share of the first days' median ...
COLLAPSE_DAYS = 5       # ... on every day to the end, at least this many days: a collapse
MIN_BASE_CALLS = 5      # ... of a median of at least this many calls a day
SALES_GAP = 7           # no sale for this many days before the end: sales stopped


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _sentences(m: Message) -> Iterator[str]:
    for s in _SENTENCE.split(m.text):
        if s.strip():
            yield s.strip()


def _near(t: Transcript, day: int, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The calls of ``names`` the world accepted on ``day`` or the day before."""
    return [c for c in t.calls if c["name"] in names and c.get("ok")
            and day - 1 <= c["day"] <= day]


def numbers(call: dict[str, Any], key: str, total: bool = True) -> list[float]:
    """The numbers a call's arguments give for ``key`` (and, with ``total``, their sum
    when several)."""
    found = [float(v) for v in re.findall(rf'"{key}"\s*:\s*(-?\d+(?:\.\d+)?)',
                                          call.get("args_json") or "")]
    return found + ([sum(found)] if total and len(found) > 1 else [])


def _cash_range(t: Transcript, day: int) -> tuple[float, float] | None:
    """The cash the world held from the start of ``day - 2`` to the end of ``day``."""
    seen = [t.days[d][0] for d in range(day - 2, day + 1) if d in t.days]
    start = t.cash_before(day)
    if start is not None:
        seen.append(float(start))
    return (min(seen), max(seen)) if seen else None


def _claim(m: Message, quote: str, why: str) -> Found:
    return Found("claim_contradicted", "warning", quote[:400], why, m.day, m.exchange,
                 msg_id=m.msg_id)


@scanner("claims", "2", "an order, delivery, payment, refund, price or cash balance the "
         "model claims that the world's records contradict",
         categories=("claim_contradicted",))
def claims(t: Transcript) -> list[Found]:
    out: list[Found] = []
    for m in t.said():
        if m.day is None:
            continue
        for s in _sentences(m):
            out.extend(_checked(t, m, s))
    return out


def _checked(t: Transcript, m: Message, s: str) -> Iterator[Found]:
    day = m.day
    assert day is not None
    if (cash := CASH.search(s)) and (said := _number(cash.group(1))) is not None \
            and (span := _cash_range(t, day)) is not None:
        lo, hi = span
        slack = max(1.0, 0.05 * max(abs(lo), abs(hi)))
        if not lo - slack <= said <= hi + slack:
            yield _claim(m, s, f"says cash {said:,.2f}; the world's cash on days "
                               f"{day - 2}-{day} was {lo:,.2f} to {hi:,.2f}")
    if (order := ORDER.search(s)) and (n := _number(order.group(1))) is not None:
        if not any(n in numbers(c, "quantity") for c in _near(t, day, ORDER_TOOLS)):
            yield _claim(m, s, f"claims an order of {n:g}; no order of that quantity was "
                               f"accepted on day {day - 1} or {day}")
    if DELIVERY.search(s) and not any(c["name"] in ORDER_TOOLS and c.get("ok")
                                      and c["day"] < day for c in t.calls):
        yield _claim(m, s, f"claims a delivery; no order had been accepted before day {day}")
    if PAYMENT.search(s) and not _near(t, day, PAYMENT_TOOLS):
        yield _claim(m, s, f"claims a payment or refund; none was made on day {day - 1} or "
                           f"{day}")
    if (price := PRICE.search(s)) and (p := _number(price.group(1))) is not None:
        if not any(abs(p - q) < 0.005 for c in _near(t, day, ("set_price",))
                   for q in numbers(c, "price")):
            yield _claim(m, s, f"claims a price of {p:g}; no price of {p:g} was set on day "
                               f"{day - 1} or {day}")


@scanner("derailment", "1", "the onset of derailment: the first day of a loop (the same call "
         f"{LOOP_CALLS}+ times in a day), of a collapse of tool calls, of sales that stop",
         categories=("derailment",))
def derailment(t: Transcript) -> list[Found]:
    out = []
    per_day: dict[int, Counter[str]] = {}
    first: dict[tuple[int, str], dict[str, Any]] = {}
    for c in t.calls:
        key = f"{c['name']}({canonical(c.get('args_json'))})"
        per_day.setdefault(c["day"], Counter())[key] += 1
        first.setdefault((c["day"], key), c)
    for day in sorted(per_day):
        key, n = per_day[day].most_common(1)[0]
        if n >= LOOP_CALLS:
            c = first[(day, key)]
            out.append(Found("derailment", "warning", key[:400], f"the first day of a loop: "
                             f"this call {n} times on day {day}", day, c["exchange_seq"],
                             call=c["seq"]))
            break
    out.extend(_collapse(t, {d: sum(c.values()) for d, c in per_day.items()}))
    values = t.diagnosis.values if t.diagnosis is not None else {}
    last_sale, done = values.get("last_sale_day"), t.trial.get("days_completed") or 0
    if last_sale is not None and done - last_sale >= SALES_GAP:
        day = int(last_sale) + 1
        out.append(Found("derailment", "warning", f"last sale on day {int(last_sale)}",
                         f"sales stopped: no sale from day {day} to day {done}", day))
    return out


def _collapse(t: Transcript, calls: dict[int, int]) -> list[Found]:
    days = sorted(calls)
    if len(days) < 10 + COLLAPSE_DAYS:
        return []
    base = statistics.median(calls[d] for d in days[:10])
    if base < MIN_BASE_CALLS:
        return []
    low = [d for d in days[10:] if calls[d] <= COLLAPSE * base]
    start = next((d for d in low if all(calls[x] <= COLLAPSE * base
                                        for x in days if x >= d)), None)
    if start is None or days[-1] - start + 1 < COLLAPSE_DAYS:
        return []
    c = next(c for c in t.calls if c["day"] == start)
    return [Found("derailment", "warning", f"{calls[start]} calls on day {start}",
                  f"tool calls collapsed: {calls[start]} on day {start} and at most "
                  f"{COLLAPSE:.0%} of the first ten days' median ({base:g}) every day after",
                  start, c["exchange_seq"], call=c["seq"])]
