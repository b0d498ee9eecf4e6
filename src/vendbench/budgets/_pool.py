"""USD budgets: reserve before a request, settle after it (design §3, "Budgets").

A run has one pool; a trial with a per-trial budget takes that much from the pool as an
earmark when it starts (so a started trial can always use its whole budget), and each
request reserves a conservative cost before it is sent. Methods never await, so within
one event loop every check-and-reserve is atomic: no number of trials in flight can
overspend a cap.

    pool = Budget("run", Decimal("50"))
    trial = pool.earmark("trial t1", Decimal("5"))   # BudgetExceeded if the pool is short
    r = trial.reserve(Decimal("0.03"))                 # BudgetExceeded if it does not fit
    r.settle(Decimal("0.012"))                         # actual cost; the rest is released
    trial.close()                                      # the unspent earmark returns
"""

from __future__ import annotations

from decimal import Decimal

from ..errors import BudgetExceeded

ZERO = Decimal(0)
# the scope of a run's one pool: a BudgetExceeded of this scope ("run budget: ...") ended
# a trial because the pool, not its own budget, could not hold its next request
POOL_SCOPE = "run"


class Budget:
    """A USD budget; ``limit=None`` means unlimited (spend is still tracked).

    ``spent`` counts everything settled here and below; ``reserved`` counts requests in
    flight that draw on this budget's own capacity.
    """

    def __init__(self, scope: str, limit: Decimal | None = None, *,
                 parent: Budget | None = None, earmarked: bool = False) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"{scope}: a budget cannot be negative")
        self.scope, self.limit, self.parent, self.earmarked = scope, limit, parent, earmarked
        self.spent = ZERO
        self.reserved = ZERO
        self.closed = False
        self._children: list[Budget] = []

    # -- what is left ------------------------------------------------------------------
    def _held(self) -> Decimal:
        """The unspent part of earmarks promised to open children."""
        return sum((max(ZERO, c.limit - c.spent) for c in self._children
                    if c.earmarked and not c.closed and c.limit is not None), ZERO)

    def left(self) -> Decimal | None:
        """What a new reservation here may use (None: no limit anywhere above)."""
        own = None if self.limit is None else \
            self.limit - self.spent - self.reserved - self._held()
        if self.earmarked or self.parent is None:
            return own
        above = self.parent.left()
        if own is None:
            return above
        return own if above is None else min(own, above)

    def has_open_earmarks(self) -> bool:
        """Whether a child still holds a promise on this budget (money may come back)."""
        return any(c.earmarked and not c.closed for c in self._children)

    def can_cover(self, amount: Decimal) -> bool:
        left = self.left()
        return left is None or amount <= left

    def _chain(self) -> list[Budget]:
        """The budgets a reservation here draws on: up to the first earmarked one."""
        chain = [self]
        while not chain[-1].earmarked and chain[-1].parent is not None:
            chain.append(chain[-1].parent)
        return chain

    def _cap(self) -> Decimal:
        node: Budget | None = self
        while node is not None:
            if node.limit is not None:
                return node.limit
            node = node.parent
        return ZERO

    # -- operations --------------------------------------------------------------------
    def reserve(self, amount: Decimal) -> Reservation:
        """Hold ``amount`` for a request, or raise BudgetExceeded (nothing is held then)."""
        left = self.left()
        if left is not None and amount > left:
            scope = next((b.scope for b in self._chain()
                          if b.limit is not None and amount > b.limit - b.spent - b.reserved
                          - b._held()), self.scope)
            raise BudgetExceeded(scope, amount, max(left, ZERO), self._cap())
        chain = self._chain()
        for node in chain:
            node.reserved += amount
        return Reservation(self, chain, amount)

    def charge(self, amount: Decimal) -> None:
        """Record spend reserved and settled elsewhere (a trial run in a worker process,
        within its earmark). It was spent: it is recorded even past the cap (a provider
        that billed more than it was allowed), which ``overspent`` then shows."""
        if amount:
            Reservation(self, self._chain(), ZERO).settle(amount)

    def overspent(self) -> Decimal:
        """How far spend went past this budget's cap, or any cap above it (0: within)."""
        node: Budget | None = self
        over = ZERO
        while node is not None:
            if node.limit is not None:
                over = max(over, node.spent - node.limit)
            node = node.parent
        return over

    def earmark(self, scope: str, amount: Decimal | None) -> Budget:
        """Open a child budget. With an amount and a limited pool, that much is promised
        to the child now, or BudgetExceeded is raised."""
        left = self.left()
        promised = amount is not None and left is not None
        if amount is not None and left is not None and amount > left:
            raise BudgetExceeded(self.scope, amount, max(left, ZERO), self._cap())
        child = Budget(scope, amount, parent=self, earmarked=promised)
        self._children.append(child)
        return child

    def close(self) -> None:
        """Release what is unspent of this budget's earmark back to its parent."""
        self.closed = True
        if self.parent is not None:
            self.parent._children = [c for c in self.parent._children if not c.closed]

    def _settle(self, chain: list[Budget], reserved: Decimal, actual: Decimal) -> None:
        for link in chain:
            link.reserved -= reserved
        node: Budget | None = self
        while node is not None:
            node.spent += actual
            node = node.parent


class Reservation:
    """Money held for one request; settle it exactly once."""

    def __init__(self, budget: Budget, chain: list[Budget], amount: Decimal) -> None:
        self.budget, self._chain, self.amount = budget, chain, amount
        self.done = False

    def settle(self, actual: Decimal) -> None:
        """Charge the actual cost and release the rest."""
        if self.done:
            raise RuntimeError("reservation settled twice")
        self.done = True
        self.budget._settle(self._chain, self.amount, actual)

    def charge_in_full(self) -> None:
        """The outcome is unknown (timeout, dropped connection): assume it was billed."""
        self.settle(self.amount)

    def release(self) -> None:
        """Nothing was billed (an error answer such as a 429 or a 5xx)."""
        self.settle(ZERO)
