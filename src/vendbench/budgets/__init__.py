"""USD budgets and prices: reservations before requests, exact Decimal accounting."""

from ._forecast import Forecast, forecast
from ._pool import POOL_SCOPE, Budget, Reservation
from ._prices import MILLION, Price, parse_price_flag, resolve_prices

__all__ = ["POOL_SCOPE", "Budget", "Forecast", "MILLION", "Price", "Reservation", "forecast", "parse_price_flag",
           "resolve_prices"]
