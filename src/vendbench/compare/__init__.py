"""Cost-capped comparisons (design §17, §18): paired batches of trials, an anytime-valid
confidence sequence per pair of models on oracle shares (by betting: valid for any
shape of scores within their bounds), a stop at a winner, an equivalence, or the budget;
racing for more than two models. ``assess`` is the decision, pure, for checks from
outside.

    spec = CompareSpec(base=build_config({...}), budget_usd=Decimal(20))
    outcome = asyncio.run(compare(spec, "vendbench.duckdb"))
"""

from ._confseq import PRIOR_PRECISION, Interval, half_width, interval, ratio
from ._race import (EQUIVALENT, INCONCLUSIVE, METHODS, WIN_RATE, WINNER, Assessment, Pairwise,
                    assess)
from ._plan import PRIOR_SPREAD, Plan, plan
from ._run import (CompareSpec, Outcome, bounds_of, compare, fix_bounds, plan_ahead, plan_from,
                   usd_per_pair)
from ._show import as_json, lines, method, observed_per_pair, standing, write_chart

__all__ = ["observed_per_pair", "bounds_of", "fix_bounds", "PRIOR_SPREAD", "Plan", "plan", "plan_ahead", "plan_from", "usd_per_pair",
           "Assessment", "CompareSpec", "EQUIVALENT", "INCONCLUSIVE", "Interval", "Outcome",
           "METHODS", "Pairwise", "PRIOR_PRECISION", "WIN_RATE", "WINNER", "as_json", "assess", "compare", "half_width",
           "interval", "lines", "method", "ratio", "standing", "write_chart"]
