"""USD budgets and prices: reservations before requests, exact Decimal accounting."""

from ._forecast import Forecast, forecast
from ._pool import Budget, Reservation
from ._prices import MILLION, Price, parse_price_flag, resolve_prices

__all__ = ["Budget", "Forecast", "MILLION", "Price", "Reservation", "forecast", "parse_price_flag",
           "resolve_prices"]
