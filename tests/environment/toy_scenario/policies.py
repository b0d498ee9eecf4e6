"""The lemonade stand's reference policies: a fixed price, and the best one."""

from __future__ import annotations


class FixedPrice:
    def __init__(self, name: str, price: float) -> None:
        self.name, self.price = name, price

    def play_day(self, call, observation: str) -> None:
        call("set_price", {"price": self.price})
        call("end_day", {})


# (20 - 4p)(p - 0.5) is largest at p = 2.75; doing nothing sells at the stand's opening
# $1.00 (the floor of a share, design §34), the reference policy at $1.50
POLICIES = {"fixed-price": lambda env: FixedPrice("baseline/fixed-price", 1.5),
            "best-price": lambda env: FixedPrice("baseline/best-price", 2.75)}
