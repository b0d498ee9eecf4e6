"""Screening (design §32.2): scanners over each trial's transcript, and a judge model that
reads each message once within a budget; findings are rows of the results file.

    from vendbench.screen import screen
    report = asyncio.run(screen(store, run_ids=None))
"""

from ._ask import EXPECTED_OUTPUT_TOKENS, Judge, judge_model
from ._judge import CATEGORIES, NAME as JUDGE, RUBRIC_VERSION, SYSTEM as RUBRIC
from ._scanners import SCANNERS, Found, Scanner, scanner
from ._screen import Forecast, JudgePlan, Screened, judge_forecast, scanners, screen
from ._transcript import Message, Transcript

__all__ = ["CATEGORIES", "EXPECTED_OUTPUT_TOKENS", "Forecast", "Found", "JUDGE", "Judge",
           "JudgePlan", "Message", "RUBRIC", "RUBRIC_VERSION", "SCANNERS", "Scanner",
           "Screened", "Transcript", "judge_forecast", "judge_model", "scanner", "scanners", "screen"]
