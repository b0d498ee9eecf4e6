"""The lemonade stand's descriptor: what vendbench reads to find and rank it. Kept apart
from the world so that discovering it imports nothing else; its distribution names it in
one line of metadata (``tests/environment/test_third_scenario.py`` writes that line)::

    [project.entry-points."vendbench.scenarios"]
    toy = "tests.environment.toy_scenario.scenario:SCENARIO"
"""

from vendbench.environment import Scenario

# its own policy names: the leaderboard's "vs base" column and the oracle shares follow
# the roles, not the names "order-up-to" and "oracle"
SCENARIO = Scenario("toy", "tests.environment.toy_scenario", "ToyEnv", None,
                    "a lemonade stand", currency="USD", default_days=5,
                    reference="fixed-price", ceiling="best-price")
