"""The simulated calendar: Shanghai dates, Chinese public holidays, campus breaks, climate.

Holidays are the official 2026 rest days (and the early 2027 ones, for horizons that
run past New Year). Weather is drawn from a monthly Shanghai climatology; the draw
itself lives in ``_demand`` so that it comes from the trial's random streams.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

DEFAULT_START = dt.date(2026, 4, 1)
MAX_DAYS = 365

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _span(name: str, first: dt.date, last: dt.date) -> dict[dt.date, str]:
    days = (last - first).days + 1
    return {first + dt.timedelta(days=i): name for i in range(days)}


HOLIDAYS: dict[dt.date, str] = {
    **_span("New Year", dt.date(2026, 1, 1), dt.date(2026, 1, 3)),
    **_span("Spring Festival", dt.date(2026, 2, 15), dt.date(2026, 2, 23)),
    **_span("Qingming", dt.date(2026, 4, 4), dt.date(2026, 4, 6)),
    **_span("Labour Day", dt.date(2026, 5, 1), dt.date(2026, 5, 5)),
    **_span("Dragon Boat", dt.date(2026, 6, 19), dt.date(2026, 6, 21)),
    **_span("Mid-Autumn", dt.date(2026, 9, 25), dt.date(2026, 9, 27)),
    **_span("National Day", dt.date(2026, 10, 1), dt.date(2026, 10, 7)),
    **_span("New Year", dt.date(2027, 1, 1), dt.date(2027, 1, 3)),
    **_span("Spring Festival", dt.date(2027, 2, 5), dt.date(2027, 2, 13)),
    **_span("Qingming", dt.date(2027, 4, 3), dt.date(2027, 4, 5)),
}

# Campus breaks: the summer break of the spec, and the winter break for long horizons.
CAMPUS_BREAKS: tuple[tuple[dt.date, dt.date], ...] = (
    (dt.date(2026, 1, 17), dt.date(2026, 2, 28)),
    (dt.date(2026, 7, 1), dt.date(2026, 8, 31)),
    (dt.date(2027, 1, 16), dt.date(2027, 2, 27)),
    (dt.date(2027, 7, 1), dt.date(2027, 8, 31)),
)

# Shanghai monthly climatology: mean daily temperature (°C), its day-to-day SD,
# and the probability of a rainy day.
CLIMATE: dict[int, tuple[float, float, float]] = {
    1: (4.8, 3.0, 0.30), 2: (6.6, 3.2, 0.33), 3: (10.3, 3.5, 0.37), 4: (15.7, 3.2, 0.37),
    5: (20.9, 2.8, 0.37), 6: (24.6, 2.3, 0.47), 7: (28.9, 2.0, 0.40), 8: (28.7, 2.0, 0.40),
    9: (24.9, 2.3, 0.33), 10: (19.6, 2.8, 0.25), 11: (13.8, 3.0, 0.27), 12: (7.4, 3.0, 0.25),
}


@dataclass(frozen=True, slots=True)
class DayInfo:
    """What the calendar says about one day (weather is added by the simulator)."""

    date: dt.date
    weekday: str
    weekend: bool
    holiday: str | None
    campus_break: bool

    @property
    def day_off(self) -> bool:
        return self.weekend or self.holiday is not None


def day_info(date: dt.date) -> DayInfo:
    """Describe a calendar date: weekday, weekend, public holiday, campus break."""
    return DayInfo(
        date=date,
        weekday=WEEKDAYS[date.weekday()],
        weekend=date.weekday() >= 5,
        holiday=HOLIDAYS.get(date),
        campus_break=any(first <= date <= last for first, last in CAMPUS_BREAKS),
    )
