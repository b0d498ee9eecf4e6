"""One pydantic model per tool: the single source of truth for validation and the schema.

Models are strict (no "5" for 5, no 2.0 for an integer) and forbid unknown keys, so
every malformed call is caught before it touches the business.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .._arguments import Args
from ._world import SUBCATEGORY_NAMES

Window = Literal[1, 3, 7, 30]
Subcategory = Literal[SUBCATEGORY_NAMES]  # type: ignore[valid-type]
MAX_NOTES = 6_000
MAX_BATCH = 100

ProductId = Field(description="catalog product id, e.g. 'P0042'", max_length=32)
MachineId = Field(description="machine id, M01–M20", max_length=32)
Quantity = Field(ge=1, le=1_000_000, description="units, a positive whole number")
Page = Field(default=1, ge=1, le=10_000, description="1-based page number")
PageSize = Field(default=20, ge=1, le=50, description="rows per page (default 20, at most 50)")


class NoArgs(Args):
    pass


class MachineArgs(Args):
    machine_id: str = MachineId


class WarehouseArgs(Args):
    product_id: str | None = Field(default=None, max_length=32,
                                   description="only this product's batches")
    page: int = Page
    page_size: int = PageSize


class OrdersArgs(Args):
    status: Literal["in_transit", "delivered"] | None = None
    page: int = Page
    page_size: int = PageSize


class CatalogArgs(Args):
    query: str | None = Field(default=None, max_length=100,
                              description="words that begin words of the product's name, "
                                          "subcategory or id (cola, choc, P0042)")
    subcategory: Subcategory | None = None
    max_unit_cost: float | None = Field(default=None, gt=0, allow_inf_nan=False,
                                        description="CNY")
    page: int = Page
    page_size: int = PageSize


class SalesArgs(Args):
    window: Window = Field(description="days back from yesterday: 1, 3, 7 or 30")
    machine_id: str | None = Field(default=None, max_length=32)
    product_id: str | None = Field(default=None, max_length=32)
    group_by: Literal["listing", "machine", "product", "subcategory", "day"] = Field(
        default="listing", description="listing = machine × product")
    page: int = Page
    page_size: int = PageSize


class FinancialsArgs(Args):
    window: Window = Field(description="days back from yesterday: 1, 3, 7 or 30")


class SqlArgs(Args):
    sql: str = Field(max_length=4_000, description="one read-only SELECT or WITH statement")


class NotesArgs(Args):
    text: str = Field(max_length=MAX_NOTES, description="the whole notebook (replaces it)")


# --- batch items -------------------------------------------------------------
class OrderItem(Args):
    product_id: str = ProductId
    quantity: int = Quantity


class PriceItem(Args):
    machine_id: str = MachineId
    product_id: str = ProductId
    price: float = Field(gt=0, le=1_000, allow_inf_nan=False, description="CNY")


class DiscardItem(Args):
    product_id: str = ProductId
    quantity: int = Quantity


class StockItem(Args):
    machine_id: str = MachineId
    product_id: str = ProductId
    quantity: int = Quantity


class DelistItem(Args):
    machine_id: str = MachineId
    product_id: str = ProductId


def batch_of(item: type[Args], name: str) -> type[Args]:
    """The schema model of a batch tool: ``items``, 1–100 of ``item``."""
    return type(name, (Args,), {
        "__annotations__": {"items": list[item]},      # type: ignore[valid-type]
        "items": Field(min_length=1, max_length=MAX_BATCH, description="1–100 items"),
    })
