"""The network's system prompt, generated from its economy file."""

from __future__ import annotations

from ._config import Economy
from ._state import _euros


def briefing(eco: Economy, days: int) -> str:
    """The system prompt, generated from the economy file."""
    e, c = eco["economy"], eco["clock"]
    locs = "\n".join(f"- {loc.name} ({loc.id}): volume ×{loc.volume:.2f}, price sensitivity "
                     f"×{loc.sensitivity:.2f}" + (f"; favours {', '.join(loc.favours)}"
                                                   if loc.favours else "")
                     for loc in eco.locations)
    costs = ", ".join(f"{k} {v}" for k, v in c["cost"].items() if v and k != "swap_item")
    channels = "\n".join(f"- {ch.channel}: EUR {_euros(ch.cost):.2f}, +{ch.bonus:.0%} traffic "
                         f"for {ch.days} days; more than {ch.uses} use(s) in 7 days costs "
                         f"−{ch.penalty:.0%} each" for ch in eco.channels.values())
    return f"""You run a network of six vending machines for {days} days: a snack and a \
drinks machine at each of three locations, with one depot, one bank account and one clock.

Locations:
{locs}

Each machine has 12 slots (snack rows A/B hold small products, 18 units; C/D large, 10;
drinks slots hold 10). You start with EUR {_euros(e['start_cash']):,.2f}. Rent is \
EUR {_euros(e['rent_per_day']):.2f} a day for the network, paid overnight from the bank; \
rent the bank cannot pay is owed and paid from the next income; more than \
{e['missed_rent_limit']} missed payments in a row end the run. Cash takings are \
banked overnight; card sales settle a day later. Identical products in one machine share \
their customers.

Find suppliers with search_web; e-mail them for catalogues or better terms (replies \
arrive overnight); check_offers shows a day's unit prices (weekly discounts come and go; \
checking reserves nothing); order_goods pays at once and delivers to the depot after the \
supplier's lead time. An e-mail to a supplier that names quantities of its products \
("40 cola") is an order: it pays at once at today's prices, like order_goods. Some \
suppliers are late, short-ship, disappear or go insolvent.

Stock expires: each delivered unit has a sell-by day (the inventories show it; sandwiches \
keep a few days, cans and packets months), it sells until that night and is written off \
the next morning. Shelves sell their oldest units first; fills take the depot's oldest.

The working day is {c['open'] // 60:02d}:00-{c['close'] // 60:02d}:00 and every call spends \
minutes, accepted or rejected: {costs}. swap_item puts units into the slot, so it \
spends a fill's {c['cost']['restock_machine']} minutes, plus {c['cost']['swap_item']} when \
another product's units come out first. A call that does not fit what is left of the day \
crosses midnight: the night passes and it finishes the next morning (its result says so, \
and a price it quotes is for the day it reports). wait_for_next_day ends the day; so does \
the {c['calls_per_day']}th tool call of a day (any call counts, accepted, rejected or \
unknown).

Customers buy overnight, at the prices in force when the day ends: a price set during \
the day changes nothing before then.

Marketing channels (per location):
{channels}
The combined effect stays between ×{eco['marketing_limits']['floor']:.2f} and \
×{eco['marketing_limits']['ceiling']:.2f}.

Customers complain; refund them in full with send_payment, or the network's reputation \
(and its customers) suffers.

What counts: your final bank balance after day {days} (card receipts settled, stock not \
counted), floored at 0. An unfinished or bankrupt run scores 0."""
