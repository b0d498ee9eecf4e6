"""Property-based fuzzing of every tool's arguments (design §2.1).

No input escapes as an exception; a rejected call changes nothing; in a partly
rejected batch, the rejected items change nothing either (the outcome equals running
only the accepted items on a copy of the world).
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vendbench.environment import make
from vendbench.environment.autovend._tools import TOOLS

from ..conftest import next_day


def _prepared():
    env = make("autovend", seed=9, days=60, daily_tool_calls=10**9)
    env.call("place_order", {"items": [{"product_id": f"P{i:04d}", "quantity": 30}
                                       for i in range(1, 21)]})
    next_day(env, 3)
    env.call("restock", {"items": [{"machine_id": f"M{m:02d}", "product_id": f"P{i:04d}",
                                    "quantity": 5} for m in (1, 2) for i in range(1, 11)]})
    env.call("write_notes", {"text": "remember the milk"})
    next_day(env, 2)
    return env


BASE = _prepared()
SQL_ENV = _prepared()      # its own: a DuckDB connection cannot be deep-copied


def fresh():
    return copy.deepcopy(BASE, memo={id(BASE.world): BASE.world})


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["P0001", "P0005", "P1372", "P0000", "M01", "M20",
                                           "M00", "", "in_transit", "water", "listing"]),
    st.sampled_from([0, 1, 2, 3, 5, 7, 30, 50, 51, 100, -1, 10**6, 0.5, 1.0, 2.5]),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)
item_keys = ["product_id", "machine_id", "quantity", "price"]


def tool_args(name: str):
    props = list(TOOLS[name].schema()["function"]["parameters"].get("properties", {}))
    if TOOLS[name].item is not None:
        item = st.dictionaries(st.sampled_from(item_keys + ["extra"]), scalars, max_size=4)
        return st.one_of(
            st.fixed_dictionaries({"items": st.lists(item, min_size=0, max_size=6)}),
            st.fixed_dictionaries({"items": json_values}),
            st.dictionaries(st.sampled_from(props + ["junk"]), json_values, max_size=3))
    return st.dictionaries(st.sampled_from(props + ["junk"]) if props else st.just("junk"),
                           scalars, max_size=len(props) + 1)


def check(name, args):
    env = fresh()
    before = env.business.fingerprint()
    out = env.call(name, args)
    assert isinstance(out, dict) and isinstance(out["ok"], bool)
    json.dumps(out)                                        # always JSON-serialisable
    if not out["ok"]:
        assert isinstance(out["error"], str) and out["error"]
    if TOOLS[name].kind in ("query", "memory") and name != "write_notes" or \
            (not out["ok"] and not out.get("accepted")):
        assert env.business.fingerprint() == before, (name, args, out)
    if out.get("rejected") and out.get("accepted"):
        twin = fresh()
        kept = [args["items"][a["index"]] for a in out["accepted"]]
        twin.call(name, {"items": kept})
        assert twin.business.fingerprint() == env.business.fingerprint()


FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", [n for n in TOOLS if n != "query_sql"])
def test_no_input_escapes_and_rejections_change_nothing(name):
    @FUZZ
    @given(args=tool_args(name))
    def run(args):
        check(name, args)

    run()


@FUZZ
@given(raw=st.one_of(st.text(max_size=40), json_values))
def test_raw_arguments_of_any_shape(raw):
    for name in ("place_order", "get_sales_report", "write_notes"):
        check(name, raw if not isinstance(raw, str) else raw)


@settings(max_examples=40, deadline=None)
@given(sql=st.one_of(st.text(max_size=60), st.sampled_from([
    "SELECT * FROM sales", "select 1", "SELECT * FROM read_csv('x')", "DROP TABLE x"])))
def test_query_sql_never_raises(sql):
    out = SQL_ENV.call("query_sql", {"sql": sql})
    assert isinstance(out["ok"], bool) and (out["ok"] or out["error"])


@settings(max_examples=40, deadline=None)
@given(name=st.text(max_size=20))
def test_unknown_tool_names(name):
    out = fresh().call(name, {})
    if name not in TOOLS:
        assert not out["ok"] and "unknown tool" in out["error"]


@pytest.mark.parametrize("name,items", [
    ("place_order", [{"product_id": "P0001", "quantity": 5}, {"product_id": "P0001",
                                                               "quantity": -5}]),
    ("restock", [{"machine_id": "M03", "product_id": "P0002", "quantity": 3},
                 {"machine_id": "M03", "product_id": "P0002", "quantity": 10**5}]),
    ("remove_stock", [{"machine_id": "M01", "product_id": "P0001", "quantity": 2},
                      {"machine_id": "M09", "product_id": "P0001", "quantity": 2}]),
    ("delist", [{"machine_id": "M02", "product_id": "P0003"},
                {"machine_id": "M02", "product_id": "P0999"}]),
    ("discard", [{"product_id": "P0015", "quantity": 1}, {"product_id": "P0015",
                                                         "quantity": 10**4}]),
    ("set_price", [{"machine_id": "M01", "product_id": "P0001", "price": 2.5},
                   {"machine_id": "M01", "product_id": "P0001", "price": 1e9}]),
])
def test_partly_rejected_batches_equal_their_accepted_part(name, items):
    env = fresh()
    out = env.call(name, {"items": items})
    assert len(out["accepted"]) == 1 and len(out["rejected"]) == 1, out
    check(name, {"items": items})
