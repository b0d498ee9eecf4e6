"""vendbench: evaluate LLM agents on long-horizon vending-business operations.

The package is layered; dependencies point one way:

    environment  <-  providers  <-  orchestrator  <-  cli
                         budgets  <-/      results  <-  leaderboard

``vendbench.environment`` is the simulator and knows nothing of LLMs.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
