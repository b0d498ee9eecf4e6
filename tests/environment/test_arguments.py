"""A tool call's arguments are parsed and validated once, for every world (design §21): the
same mistake reads the same in AutoVend and the network, and changes nothing."""

from __future__ import annotations

import pytest

from vendbench.environment import make


@pytest.mark.parametrize("arguments, says", [
    ('{"slot_id": ', "arguments are not valid JSON (Expecting value at position 12); "
                     "send a JSON object such as {}"),
    ("[1, 2]", "arguments must be a JSON object, got list"),
    ('"text"', "arguments must be a JSON object, got str"),
])
def test_arguments_that_are_not_an_object_read_the_same_in_every_world(arguments, says):
    for scenario, tool in (("autovend", "get_machine_inventory"),
                           ("network", "get_machine_inventory")):
        env = make(scenario, seed=1, days=2)
        before = env.summary()
        assert env.call(tool, arguments) == {"ok": False, "error": f"{tool}: {says}"}
        assert env.summary() == before


def test_a_field_that_does_not_fit_says_where_and_what_it_got():
    autovend = make("autovend", seed=1, days=2).call("get_machine_inventory", {"machine_id": 7})
    network = make("network", seed=1, days=2).call("set_price", {"slot_id": 7, "price": "x"})
    for result in (autovend, network):
        assert result["ok"] is False and "invalid arguments: " in result["error"]
    assert "machine_id: Input should be a valid string (got 7)" in autovend["error"]
    assert "price: Input should be a valid number" in network["error"]
    assert "(got 'x')" in network["error"]


@pytest.mark.parametrize("empty", [None, "", "   "])
def test_no_arguments_are_an_empty_object(empty):
    assert make("network", seed=1, days=2).call("get_status", empty)["ok"]
    assert make("autovend", seed=1, days=2).call("list_machines", empty)["ok"]
