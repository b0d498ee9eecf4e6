"""The recording session every player goes through: numbering, refusal, records."""

from __future__ import annotations

from vendbench.environment import DAY_OVER, Kept, RecordingSession, make


def test_calls_are_numbered_recorded_and_followed_by_their_day_records():
    kept = Kept()
    session = RecordingSession(make("autovend", seed=1, days=3), kept, calls=5)
    session.call("get_daily_report", {})
    session.call("end_day", {})
    assert [(c.seq, c.day, c.name) for c in kept.calls] == [(6, 1, "get_daily_report"),
                                                            (7, 1, "end_day")]
    days = [r for records in kept.rows for r in records.get("days", [])]
    assert [d["day"] for d in days] == [1]          # the day's books, once
    assert session.env.drain_records() == {"days": [], "sales": []}   # drained already


def test_a_call_made_during_a_day_that_has_ended_is_refused_but_recorded():
    kept = Kept()
    session = RecordingSession(make("network", seed=1, days=3), kept)
    session.call("wait_for_next_day", {}, day=1)
    refused = session.call("check_balance", {}, day=1)    # the same reply's next call
    assert refused is DAY_OVER and not kept.calls[-1].ran
    assert session.env.day == 2 and session.calls == 2


def test_a_policy_that_leaves_its_day_open_has_it_ended():
    session = RecordingSession(make("autovend", seed=1, days=3))
    session.end_day(1)
    assert session.env.day == 2 and session.calls == 1
    session.end_day(1)                              # already over: nothing happens
    assert session.calls == 1


def test_kept_calls_are_handed_on_in_order_once():
    kept, other = Kept(), Kept()
    session = RecordingSession(make("autovend", seed=1, days=3), kept)
    session.call("end_day", {})
    session.call("end_day", {})
    assert kept.hand_to(other) == 2 and kept.hand_to(other) == 0
    assert [c.seq for c in other.calls] == [1, 2]
    assert [r["day"] for rows in other.rows for r in rows["days"]] == [1, 2]
