"""USD budgets and prices: reservations before requests, exact Decimal accounting."""

from ._pool import Budget, Reservation
from ._prices import MILLION, Price, parse_price_flag, resolve_prices

__all__ = ["Budget", "MILLION", "Price", "Reservation", "parse_price_flag", "resolve_prices"]
