"""Held-out worlds (design §8): models × worlds × seeds, private worlds from a secret salt,
and a leaderboard that never pairs or ranks across worlds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from vendbench.cli import main
from vendbench.results import Store

from .conftest import query, run

SALT = "tr0ub4dor-and-3-private-world-salt"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        rc = main(list(args))
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_trials_are_models_times_worlds_times_seeds_and_record_their_world(tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=5, seeds=[1, 2], world_seeds=[7, 8],
                 models=[{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}])
    trials = result.as_json()["trials"]
    assert len(trials) == 2 * 2 * 2
    assert sorted((t["model"], t["world_seed"], t["seed"]) for t in trials) == sorted(
        (m, w, s) for m in ("baseline/order-up-to", "baseline/oracle") for w in (7, 8)
        for s in (1, 2))
    rows = query(db, "SELECT trial_id, world_seed, seed FROM trials")
    assert all(f"-w{w}-s{s}-" in t for t, w, s in rows)
    assert query(db, "SELECT world_seeds, world_salt_sha256 FROM runs") == [("[7,8]", None)]
    # the worlds differ: the same policy and seed end elsewhere
    net = dict(((w, s), n) for w, s, n in query(
        db, "SELECT world_seed, seed, final_net_assets FROM trials WHERE model = "
            "'baseline/order-up-to'"))
    assert net[(7, 1)] != net[(8, 1)]


def test_the_default_is_the_papers_one_world_with_the_short_ids(tmp_path):
    db = str(tmp_path / "r.duckdb")
    run(db, days=2, models=[{"id": "baseline/order-up-to"}])
    assert query(db, "SELECT world_seed, trial_id LIKE '%-w%' FROM trials") == [(2026, False)]
    from vendbench.environment.autovend import DEFAULT_WORLD_SEED
    from vendbench.orchestrator._config import DEFAULT_WORLD_SEED as CONFIG_DEFAULT

    assert CONFIG_DEFAULT == DEFAULT_WORLD_SEED == 2026


def test_a_panel_names_its_worlds_and_an_old_single_world_seed_still_reads(tmp_path, capsys):
    from vendbench.orchestrator import build_config

    assert build_config({"world_seed": 7, "models": [{"id": "baseline/oracle"}]}
                        ).world_seeds == [7]
    assert build_config({"world_seed": None, "models": [{"id": "baseline/oracle"}]}
                        ).world_seeds == [2026]
    panel = tmp_path / "p.toml"
    panel.write_text('days = 2\nworld_seeds = [3, 4]\nseeds = [1]\n'
                     '[[models]]\nid = "baseline/order-up-to"\n')
    rc, out, err = cli(capsys, "run", "--panel", str(panel), "--db", str(tmp_path / "r.duckdb"),
                       "--json")
    assert rc == 0, err
    assert sorted(t["world_seed"] for t in json.loads(out)["trials"]) == [3, 4]
    rc, out, err = cli(capsys, "run", "--models", "baseline/oracle", "--world-seeds", "5", "5",
                       "--db", str(tmp_path / "x.duckdb"))
    assert rc == 2 and "distinct" in err


def test_a_private_world_never_stores_or_prints_its_salt(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "r.duckdb")
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT)
    rc, out, err = cli(capsys, "run", "--models", "baseline/order-up-to", "--days", "5",
                       "--world-seeds", "7", "--db", db, "--json")
    assert rc == 0, err
    rc2, out2, err2 = cli(capsys, "leaderboard", "--db", db, "--format", "json")
    rc3, out3, err3 = cli(capsys, "runs", "--db", db, "--run", "latest", "--json")
    assert rc2 == rc3 == 0
    for text in (out, err, out2, err2, out3, err3):
        assert SALT not in text
    assert SALT.encode() not in Path(db).read_bytes()
    digest = hashlib.sha256(SALT.encode()).hexdigest()
    assert query(db, "SELECT world_salt_sha256 FROM runs") == [(digest,)]
    assert json.loads(out2)["cohort"]["world_salt_sha256"] == digest
    private = json.loads(out)["trials"][0]["final_net_assets"]
    monkeypatch.delenv("VENDBENCH_WORLD_SALT")
    rc, out, err = cli(capsys, "run", "--models", "baseline/order-up-to", "--days", "5",
                       "--world-seeds", "7", "--db", str(tmp_path / "public.duckdb"), "--json")
    assert json.loads(out)["trials"][0]["final_net_assets"] != private    # another world


def test_a_panel_can_name_the_salts_variable_and_must_have_it(tmp_path, capsys, monkeypatch):
    panel = tmp_path / "p.toml"
    panel.write_text('days = 2\nworld_salt_env = "NIGHTLY_SALT"\n'
                     '[[models]]\nid = "baseline/order-up-to"\n')
    db = str(tmp_path / "r.duckdb")
    rc, out, err = cli(capsys, "run", "--panel", str(panel), "--db", db)
    assert rc == 2 and "NIGHTLY_SALT" in err and "not set" in err
    monkeypatch.setenv("NIGHTLY_SALT", SALT)
    rc, out, err = cli(capsys, "run", "--panel", str(panel), "--db", db)
    assert rc == 0, err
    assert query(db, "SELECT world_salt_sha256 FROM runs") == [
        (hashlib.sha256(SALT.encode()).hexdigest(),)]
    assert "NIGHTLY_SALT" in query(db, "SELECT config_json FROM runs")[0][0]    # the name


def test_resuming_a_private_run_needs_the_same_salt(tmp_path, capsys, monkeypatch):
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "r.duckdb")
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT)
    config = build_config({"days": 2, "models": [{"id": "baseline/order-up-to"}]})
    run_id = asyncio.run(execute(config, db)).run_id
    monkeypatch.delenv("VENDBENCH_WORLD_SALT")
    rc, out, err = cli(capsys, "run", "--resume", run_id, "--db", db)
    assert rc == 2 and "played private worlds" in err and "VENDBENCH_WORLD_SALT" in err
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT + "x")
    rc, out, err = cli(capsys, "run", "--resume", run_id, "--db", db)
    assert rc == 2 and "is not the one run" in err and SALT not in err
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT)
    rc, out, err = cli(capsys, "run", "--resume", run_id, "--db", db)
    assert rc == 0, err


def test_the_leaderboard_pairs_by_world_and_refuses_other_worlds(tmp_path, capsys):
    db = str(tmp_path / "r.duckdb")
    models = [{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}]
    run(db, days=8, seeds=[1], world_seeds=[7, 8], models=models)
    run(db, days=8, seeds=[1], models=models)                        # world 2026, newer
    rc, out, err = cli(capsys, "leaderboard", "--db", db, "--run", "all", "--format", "json")
    board = json.loads(out)
    assert rc == 0 and board["cohort"]["world_seeds"] == [2026]
    refused = {r["reason"] for r in board["refused"]}
    assert refused == {"world_seeds [7, 8] vs [2026]"}
    assert {r["model"]: r["trials"] for r in board["rows"]} == {
        "baseline/order-up-to": 1, "baseline/oracle": 1}
    # the run of two worlds on its own: every comparison within a world
    older = query(db, "SELECT run_id FROM runs ORDER BY created_at")[0][0]
    rc, out, err = cli(capsys, "leaderboard", "--db", db, "--run", older, "--format", "json")
    rows = {r["model"]: r for r in json.loads(out)["rows"]}
    net = {(m, w): n for m, w, n in query(db, "SELECT model, world_seed, final_net_assets "
                                              "FROM trials WHERE run_id = ?", [older])}
    idle = dict(query(db, "SELECT world_seed, score FROM floors WHERE days = 8"))
    oracle = dict(query(db, "SELECT world_seed, score FROM ceilings WHERE days = 8"))
    assert all(oracle[w] == net[("baseline/oracle", w)] for w in (7, 8))
    # each world's share against its own oracle and doing nothing, then paired by world
    paired = sum(1 - (net[("baseline/order-up-to", w)] - idle[w]) / (oracle[w] - idle[w])
                 for w in (7, 8)) / 2
    assert rows["baseline/oracle"]["vs_baseline_points"] == pytest.approx(paired)
    assert rows["baseline/oracle"]["baseline_pairs"] == 2


def test_hidden_model_metrics_use_each_trials_own_world(tmp_path):
    from vendbench.environment import record_tables, trial_metrics
    from vendbench.leaderboard import build

    db = str(tmp_path / "r.duckdb")
    run(db, days=8, seeds=[1], world_seeds=[7, 8], models=[{"id": "baseline/oracle"}])
    board = build(db)
    (row,) = board.rows
    with Store(db, read_only=True) as store:
        per_world = []
        for trial_id, world in store.con.execute(
                "SELECT trial_id, world_seed FROM trials").fetchall():
            rows = store.trial_records(trial_id, record_tables("autovend"))
            own = trial_metrics("autovend", rows, rows["tool_calls"], world)
            other = trial_metrics("autovend", rows, rows["tool_calls"],
                                  15 - world)
            assert own["assortment_score"] != other["assortment_score"]
            per_world.append(own["assortment_score"])
    assert row.operations["assortment_score"] == pytest.approx(sum(per_world) / 2)


def test_private_worlds_hide_the_hidden_model_metrics_without_their_salt(tmp_path,
                                                                        monkeypatch):
    from vendbench.leaderboard import build

    db = str(tmp_path / "r.duckdb")
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT)
    run(db, days=8, models=[{"id": "baseline/oracle"}])
    seen = build(db)
    assert seen.rows[0].operations["assortment_score"] is not None
    monkeypatch.delenv("VENDBENCH_WORLD_SALT")
    blind = build(db)
    assert blind.rows[0].operations["assortment_score"] is None
    assert blind.rows[0].operations["stockout_rate"] == seen.rows[0].operations["stockout_rate"]
    assert any("need the worlds' salt" in n for n in blind.as_json()["notes"])


def test_a_results_file_of_schema_4_is_upgraded_in_place(tmp_path):
    from vendbench.results import Store
    from vendbench.results._schema import SCHEMA_VERSION

    db = str(tmp_path / "old.duckdb")
    run(db, days=2, world_seeds=[7], models=[{"id": "baseline/order-up-to"}])
    with Store(db) as store:                      # make it look as schema 4 wrote it
        con = store.con
        con.execute("ALTER TABLE trials DROP COLUMN world_seed")
        con.execute("ALTER TABLE runs DROP COLUMN world_salt_sha256")
        con.execute("ALTER TABLE runs DROP COLUMN world_seeds")
        con.execute("UPDATE runs SET config_json = json_object('world_seed', 7, 'models', "
                    "json_extract(config_json, '$.models'))")
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    assert query(db, "SELECT world_seed FROM trials") == [(7,)]       # read-only opens it
    assert query(db, "SELECT world_seeds FROM runs") == [("[7]",)]
    assert query(db, "SELECT value FROM meta WHERE key = 'schema_version'") == \
        [(str(SCHEMA_VERSION),)]


def test_a_results_file_of_schema_7_gets_its_scores_from_final_net_assets(tmp_path):
    """Before schema 8 the score was stored as ``final_net_assets``: opening such a file
    adds ``score`` and fills it from there, so the leaderboard ranks its trials as before."""
    from vendbench.leaderboard import build
    from vendbench.results import Store

    db = str(tmp_path / "old.duckdb")
    run(db, days=2, seeds=[1, 2], models=[{"id": "baseline/order-up-to"}])
    before = [(r.model, r.mean_net_assets) for r in build(db).rows]
    with Store(db) as store:                      # make it look as schema 7 wrote it
        store.con.execute("ALTER TABLE trials DROP COLUMN score")
        store.con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    assert query(db, "SELECT count(*) FROM trials WHERE score = final_net_assets") == [(2,)]
    assert [(r.model, r.mean_net_assets) for r in build(db).rows] == before
    assert before[0][1] > 0


def test_resume_reruns_the_failed_trial_of_each_world(tmp_path, capsys):
    """A run over worlds 7 and 8 whose world-8 trial died of a harness error: resume
    reruns world 8's trial, keeps world 7's, and never runs a trial twice (the latest
    attempt is keyed on model, world, seed and repeat)."""
    db = str(tmp_path / "r.duckdb")
    run_id = run(db, days=2, world_seeds=[7, 8], models=[{"id": "baseline/order-up-to"}]
                 ).run_id
    with Store(db) as store:
        store.con.execute("UPDATE trials SET status = 'error', reason = 'a harness error' "
                          "WHERE world_seed = 8")
    kept = query(db, "SELECT trial_id, ended_at FROM trials WHERE world_seed = 7")
    rc, out, err = cli(capsys, "run", "--resume", run_id, "--db", db)
    assert rc == 0, err
    rows = query(db, "SELECT world_seed, status, count(*) OVER (PARTITION BY world_seed) "
                     "FROM trials ORDER BY world_seed")
    assert rows == [(7, "completed", 1), (8, "completed", 1)]
    assert query(db, "SELECT trial_id, ended_at FROM trials WHERE world_seed = 7") == kept


def test_a_private_and_a_public_world_run_are_never_paired(tmp_path, monkeypatch):
    """Two runs that agree on everything but the salt are separate cohorts: the
    leaderboard's --run all and the trend never pair or pool them."""
    from vendbench.leaderboard import build, build_trend

    db = str(tmp_path / "r.duckdb")
    models = [{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}]
    run(db, days=2, seeds=[1, 2], models=models)                     # public
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", SALT)
    run(db, days=2, seeds=[1, 2], models=models)                     # private
    runs = [r for r, in query(db, "SELECT run_id FROM runs ORDER BY created_at")]
    board = build(db, "all")
    assert board.selection.runs == [runs[1]]                         # the newest cohort only
    assert {t["run_id"] for t in board.selection.trials} == {runs[1]}
    assert [o["runs"] for o in board.selection.others] == [1]        # the other, listed apart
    assert all(r.trials == 2 for r in board.rows)                    # never pooled
    trend = build_trend(db)
    assert [r["run_id"] for r in trend.runs] == [runs[1]]            # nothing to pair across
    assert trend.comparisons == [] or all(c.get("previous_run") != runs[0]
                                          for c in trend.comparisons)
    assert trend.regressions == []
    monkeypatch.delenv("VENDBENCH_WORLD_SALT")
    public = build(db, runs[0])
    assert public.selection.cohort["world_salt_sha256"] is None
    assert board.selection.cohort["world_salt_sha256"] is not None
