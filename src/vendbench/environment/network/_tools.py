"""The network world's 22 tools: one strict pydantic model per tool, which is both the
validator and the JSON schema an agent sees."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .._arguments import Args, ToolSpec, openai_schema

Euros = Annotated[float, Field(gt=0, le=10_000, description="euros, at most 2 decimals")]


class NoArgs(Args):
    pass


class SalesReport(Args):
    days: Literal[1, 7, 30] = Field(default=1, description="window: the last 1, 7 or 30 days")


class MachineInventory(Args):
    location: str | None = Field(default=None, description="a location id; all if omitted")


class SearchWeb(Args):
    query: str = Field(min_length=1, max_length=200)


class ReadEmail(Args):
    email_id: str = Field(min_length=1, max_length=40)


class SendEmail(Args):
    to: str = Field(min_length=3, max_length=200, description="an e-mail address")
    subject: str = Field(max_length=200)
    body: str = Field(max_length=4000)


class CheckOffers(Args):
    supplier_id: str = Field(min_length=1, max_length=40)
    quantity: int = Field(default=1, ge=1, le=10_000)


class OrderItem(Args):
    product_id: str = Field(min_length=1, max_length=60)
    quantity: int = Field(ge=1, le=10_000)


class OrderGoods(Args):
    supplier_id: str = Field(min_length=1, max_length=40)
    items: list[OrderItem] = Field(min_length=1, max_length=20)


class Restock(Args):
    slot_id: str = Field(min_length=1, max_length=40, description="e.g. AI-HOUSE:DRINKS:A1")
    product_id: str = Field(min_length=1, max_length=60)
    quantity: int = Field(ge=1, le=100)


class Swap(Args):
    slot_id: str = Field(min_length=1, max_length=40)
    product_id: str = Field(min_length=1, max_length=60)


class SetPrice(Args):
    slot_id: str = Field(min_length=1, max_length=40)
    price: Euros


class ClearSlot(Args):
    slot_id: str = Field(min_length=1, max_length=40)


class SendPayment(Args):
    to: str = Field(min_length=1, max_length=200, description="a complaint id or the "
                                                              "customer's e-mail address")
    amount: Euros


class RunMarketing(Args):
    location: str = Field(min_length=1, max_length=40)
    channel: Literal["prints", "slack", "email"]
    message: str = Field(min_length=1, max_length=1000)


class WriteNote(Args):
    text: str = Field(max_length=6000, description="replaces the notes (6,000 characters)")


class SetReminder(Args):
    day: int = Field(ge=1, le=366)
    text: str = Field(min_length=1, max_length=500)


TOOLS: dict[str, ToolSpec] = {
    "get_status": ToolSpec(NoArgs, "Day, time, bank balance, card receipts pending, reputation, "
                           "unread e-mails, open complaints, reminders due."),
    "get_sales_report": ToolSpec(SalesReport, "Units and revenue per machine and product."),
    "get_machine_inventory": ToolSpec(MachineInventory, "Every slot: product, units, capacity, "
                                                "price, and its oldest units' sell-by "
                                                "day."),
    "get_storage_inventory": ToolSpec(NoArgs, "Units in the depot (and their sell-by days), and "
                                      "shipments on their way."),
    "search_web": ToolSpec(SearchWeb, "Find suppliers: their ids and e-mail addresses."),
    "list_emails": ToolSpec(NoArgs, "The inbox, newest first."),
    "read_email": ToolSpec(ReadEmail, "One e-mail in full."),
    "send_email": ToolSpec(SendEmail, "Write to a supplier (catalogues, better terms) or a "
                              "customer; replies arrive overnight. An e-mail to a supplier "
                              "naming quantities of its products is an order, paid at "
                              "once."),
    "check_offers": ToolSpec(CheckOffers, "A found supplier's unit prices at a quantity, for the "
                                  "day it reports (valid_day), and how many days each "
                                  "product keeps. Reserves nothing."),
    "order_goods": ToolSpec(OrderGoods, "Buy from a found supplier; paid at once at today's prices; "
                                "delivered to the depot."),
    "restock_machine": ToolSpec(Restock, "Fill a slot from the depot (45 minutes)."),
    "swap_item": ToolSpec(Swap, "Empty a slot into the depot and fill it to capacity with a "
                        "product: a fill's 45 minutes, 75 when another product's units "
                        "come out first."),
    "set_price": ToolSpec(SetPrice, "Set a slot's retail price in euros (5 minutes); customers "
                            "buy overnight at the prices in force when the day ends."),
    "clear_slot": ToolSpec(ClearSlot, "Empty a slot into the depot (30 minutes)."),
    "send_payment": ToolSpec(SendPayment, "Refund a customer's complaint, in full."),
    "run_marketing": ToolSpec(RunMarketing, "A campaign at one location on one channel."),
    "get_marketing_report": ToolSpec(NoArgs, "The channels' rules, recent campaigns, current "
                                     "effects."),
    "write_note": ToolSpec(WriteNote, "Replace your notes (your memory)."),
    "read_notes": ToolSpec(NoArgs, "Read your notes."),
    "set_reminder": ToolSpec(SetReminder, "A reminder shown on a day."),
    "list_reminders": ToolSpec(NoArgs, "Reminders still to come."),
    "wait_for_next_day": ToolSpec(NoArgs, "End the working day: customers buy overnight at the "
                                  "prices then in force; in the morning expired units are "
                                  "written off and deliveries and replies arrive."),
}


def schemas() -> list[dict[str, Any]]:
    return [openai_schema(name, spec.text, spec.model) for name, spec in TOOLS.items()]
