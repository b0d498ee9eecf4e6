"""The frozen world of design §2: catalog, machines, calendar, hidden demand."""

from __future__ import annotations

import collections
import datetime as dt

import numpy as np

from vendbench.environment.autovend import build_world
from vendbench.environment.autovend._calendar import day_info
from vendbench.environment.autovend._world import SUBCATEGORY_NAMES


def test_catalog_has_1372_skus_in_18_subcategories():
    world = build_world()
    assert len(world.products) == 1372
    assert len({p.id for p in world.products}) == 1372
    subs = collections.Counter(p.subcategory for p in world.products)
    assert len(subs) == 18 == len(SUBCATEGORY_NAMES)
    assert sum(1 for s in subs if world.products[[p.subcategory for p in world.products]
                                                 .index(s)].beverage) == 8


def test_shelf_life_is_30_days_for_bread_and_dairy_and_90_otherwise():
    for p in build_world().products:
        expected = 30 if p.subcategory in ("bread/cakes", "dairy/yogurt") else 90
        assert p.shelf_life == expected, p


def test_prices_are_whole_fen_and_cost_below_reference_price():
    for p in build_world().products:
        assert isinstance(p.unit_cost, int) and isinstance(p.ref_price, int)
        assert 0 < p.unit_cost < p.ref_price


def test_twenty_machines_of_five_site_types():
    sites = collections.Counter(m.site_type for m in build_world().machines)
    assert sites == {"workplace": 6, "campus": 2, "residential": 4, "commercial": 6, "office": 2}


def test_world_is_a_pure_function_of_world_seed():
    from vendbench.environment.autovend._world import _build

    a, b = build_world(7), _build.__wrapped__(7, (), None)   # the second bypasses the cache
    assert a.products == b.products
    assert np.array_equal(a.hidden.attraction, b.hidden.attraction)
    c = build_world(8)
    assert not np.array_equal(a.hidden.attraction, c.hidden.attraction)


def test_a_salted_world_is_another_world_and_keeps_only_the_salts_hash():
    import hashlib

    from vendbench.environment.autovend._world import salt_key

    public, private = build_world(7), build_world(7, "correct horse battery staple")
    assert public.salt_sha256 is None
    assert private.salt_sha256 == hashlib.sha256(b"correct horse battery staple").hexdigest()
    assert not np.array_equal(public.hidden.attraction, private.hidden.attraction)
    assert [p.id for p in public.products] == [p.id for p in private.products]   # same ids
    assert [p.name for p in public.products] != [p.name for p in private.products]
    again = build_world(7, "correct horse battery staple")
    assert np.array_equal(private.hidden.attraction, again.hidden.attraction)
    other = build_world(7, "correct horse battery stapler")
    assert not np.array_equal(private.hidden.attraction, other.hidden.attraction)
    # what the world is generated from is not the stored hash
    key = salt_key("correct horse battery staple")
    assert private.salt_sha256 not in "".join(f"{k:08x}" for k in key)
    assert "correct horse" not in repr(private.salt_sha256)
    assert build_world(7, "").salt_sha256 is None             # an empty salt is no salt


def test_site_elasticities_within_paper_range():
    eps = build_world().hidden.elasticity
    assert eps.min() >= 2.4 and eps.max() <= 3.5


def test_popularity_is_heavy_tailed_with_mean_one():
    pop = build_world().hidden.popularity
    assert abs(pop.mean() - 1) < 1e-9
    assert pop.max() > 8 * np.median(pop)        # a few products dominate


def test_2026_public_holidays_and_campus_break():
    assert day_info(dt.date(2026, 4, 5)).holiday == "Qingming"
    assert day_info(dt.date(2026, 5, 3)).holiday == "Labour Day"
    assert day_info(dt.date(2026, 6, 19)).holiday == "Dragon Boat"
    assert day_info(dt.date(2026, 9, 25)).holiday == "Mid-Autumn"
    assert day_info(dt.date(2026, 10, 7)).holiday == "National Day"
    assert day_info(dt.date(2026, 4, 8)).holiday is None
    assert day_info(dt.date(2026, 7, 15)).campus_break
    assert not day_info(dt.date(2026, 9, 15)).campus_break
    assert day_info(dt.date(2026, 4, 4)).weekday == "Saturday"
