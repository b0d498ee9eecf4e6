"""The DuckDB schema of a results file (design §3.2).

Messages are stored once per trial; an exchange's ``request_json`` lists the ids of the
messages it sent (plus its parameters), so a long trial's log grows linearly with its
length, yet every request can be rebuilt exactly (``providers.rebuild_request``).

A ``reservations`` row is committed before its request is sent, with everything the
trial queued before it: a request that has a reservation but no ``exchanges`` row was in
flight when the process died, and is charged its reservation when the run resumes.
Each run of a trial (the first, then each resume) is a row of ``segments``.

The tables a trial records day by day are its scenario's (``environment.RecordTable``):
``Store.ensure_records`` creates them, or adds the columns a shared one lacks, when a run
begins. Every scenario records ``days``, so its core columns are here.
"""

from __future__ import annotations

from ._rows import APPENDED

SCHEMA_VERSION = 15     # 2: trials.attempt, exchanges.sent_at; 3: cache tokens, warnings;
                        # 4: reservations, segments; 5: worlds (runs.world_seeds,
                        # runs.world_salt_sha256, trials.world_seed); 6:
                        # exchanges.usage_counted (a reply without usage); 7: ceilings;
                        # 8: trials.score (final_net_assets is net assets in every world);
                        # 9: exchanges.reply_json (the reply in vendbench's own shape);
                        # 10: match_seats (the arena's matches and their operators);
                        # 11: messages.carried_tokens (what a reply carries back);
                        # 12: exchanges.purpose (act, or compaction); 13:
                        # trials.net_transfers (an arena seat's money from the others);
                        # 14: floors (what doing nothing scores: a share's 0, design §34);
                        # 15: findings, screened, screen_chunks, screens (design §32.2)

DDL = """
CREATE TABLE IF NOT EXISTS meta(key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs(
    run_id VARCHAR PRIMARY KEY, name VARCHAR, created_at TIMESTAMP, scenario VARCHAR,
    days INTEGER, config_json VARCHAR, code_version VARCHAR, prompt_sha256 VARCHAR,
    tools_sha256 VARCHAR, prompts_json VARCHAR, tools_json VARCHAR, prices_json VARCHAR,
    total_budget_usd DECIMAL(18, 9), status VARCHAR, finished_at TIMESTAMP,
    world_seeds VARCHAR, world_salt_sha256 VARCHAR);
CREATE TABLE IF NOT EXISTS trials(
    trial_id VARCHAR PRIMARY KEY, run_id VARCHAR, model VARCHAR, seed INTEGER,
    "repeat" INTEGER, attempt INTEGER, status VARCHAR, reason VARCHAR, initial_cash DOUBLE,
    final_cash DOUBLE, final_net_assets DOUBLE, score DOUBLE, cost_usd DECIMAL(18, 9),
    budget_usd DECIMAL(18, 9), input_tokens BIGINT, output_tokens BIGINT,
    cache_read_tokens BIGINT, cache_write_tokens BIGINT, exchanges INTEGER,
    tool_calls INTEGER, days_completed INTEGER, started_at TIMESTAMP, ended_at TIMESTAMP,
    wall_seconds DOUBLE, world_seed INTEGER, net_transfers DOUBLE);
CREATE TABLE IF NOT EXISTS messages(
    trial_id VARCHAR, msg_id INTEGER, role VARCHAR, content_json VARCHAR, tokens INTEGER,
    carried_tokens INTEGER);
CREATE TABLE IF NOT EXISTS exchanges(
    trial_id VARCHAR, seq INTEGER, day INTEGER, attempt INTEGER, model VARCHAR,
    request_json VARCHAR, response_json VARCHAR, input_tokens BIGINT, output_tokens BIGINT,
    cache_read_tokens BIGINT, cache_write_tokens BIGINT, reasoning_tokens BIGINT,
    cost_usd DECIMAL(18, 9), reserved_usd DECIMAL(18, 9), latency_ms DOUBLE, status VARCHAR,
    error VARCHAR, sent_at TIMESTAMP, usage_counted BOOLEAN, reply_json VARCHAR,
    purpose VARCHAR);
CREATE TABLE IF NOT EXISTS reservations(
    trial_id VARCHAR, seq INTEGER, attempt INTEGER, day INTEGER, reserved_usd DECIMAL(18, 9),
    request_json VARCHAR, reserved_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS segments(
    trial_id VARCHAR, segment INTEGER, started_at TIMESTAMP, ended_at TIMESTAMP,
    from_seq INTEGER, replayed_calls INTEGER, replay_seconds DOUBLE, status VARCHAR,
    PRIMARY KEY (trial_id, segment));
CREATE TABLE IF NOT EXISTS tool_calls(
    trial_id VARCHAR, seq INTEGER, exchange_seq INTEGER, day INTEGER, call_id VARCHAR,
    name VARCHAR, args_json VARCHAR, result_json VARCHAR, ok BOOLEAN);
CREATE TABLE IF NOT EXISTS days(
    trial_id VARCHAR, day INTEGER, cash DOUBLE, net_assets DOUBLE);
CREATE TABLE IF NOT EXISTS run_warnings(
    run_id VARCHAR, model VARCHAR, kind VARCHAR, message VARCHAR, warned_at TIMESTAMP,
    PRIMARY KEY (run_id, model, kind));
CREATE TABLE IF NOT EXISTS comparisons(
    comparison_id VARCHAR PRIMARY KEY, created_at TIMESTAMP, scenario VARCHAR, days INTEGER,
    models_json VARCHAR, config_json VARCHAR, status VARCHAR, verdict VARCHAR,
    best VARCHAR, reason VARCHAR, pairs INTEGER, spent_usd DECIMAL(18, 9),
    finished_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS comparison_steps(
    comparison_id VARCHAR, step INTEGER, run_id VARCHAR, pairs INTEGER,
    survivors_json VARCHAR, intervals_json VARCHAR, spent_usd DECIMAL(18, 9),
    decided_at TIMESTAMP, PRIMARY KEY (comparison_id, step));
CREATE TABLE IF NOT EXISTS ceilings(
    scenario VARCHAR, world_seed INTEGER, seed INTEGER, salt_sha256 VARCHAR, days INTEGER,
    policy VARCHAR, score DOUBLE, computed_at TIMESTAMP,
    PRIMARY KEY (scenario, world_seed, seed, salt_sha256, days));
CREATE TABLE IF NOT EXISTS floors(
    scenario VARCHAR, world_seed INTEGER, seed INTEGER, salt_sha256 VARCHAR, days INTEGER,
    policy VARCHAR, score DOUBLE, computed_at TIMESTAMP,
    PRIMARY KEY (scenario, world_seed, seed, salt_sha256, days));
CREATE TABLE IF NOT EXISTS match_seats(
    match_id VARCHAR, attempt INTEGER, seat INTEGER, trial_id VARCHAR, run_id VARCHAR,
    model VARCHAR, world_seed INTEGER, seed INTEGER, "repeat" INTEGER, operator VARCHAR,
    PRIMARY KEY (match_id, attempt, seat));
CREATE TABLE IF NOT EXISTS findings(
    trial_id VARCHAR, scanner VARCHAR, scanner_version VARCHAR, judge VARCHAR, day INTEGER,
    exchange INTEGER, msg_id INTEGER, call INTEGER, category VARCHAR, severity VARCHAR,
    quote VARCHAR, explanation VARCHAR, screen_id VARCHAR, found_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS screened(
    trial_id VARCHAR, scanner VARCHAR, scanner_version VARCHAR, judge VARCHAR,
    screen_id VARCHAR, screened_at TIMESTAMP, PRIMARY KEY (trial_id, scanner));
CREATE TABLE IF NOT EXISTS screen_chunks(
    scanner VARCHAR, scanner_version VARCHAR, judge VARCHAR, chunk_sha256 VARCHAR,
    trial_id VARCHAR, first_day INTEGER, last_day INTEGER, findings_json VARCHAR,
    dropped INTEGER, cost_usd DECIMAL(18, 9), screen_id VARCHAR, screened_at TIMESTAMP,
    PRIMARY KEY (scanner, scanner_version, judge, chunk_sha256));
CREATE TABLE IF NOT EXISTS screens(
    screen_id VARCHAR PRIMARY KEY, started_at TIMESTAMP, finished_at TIMESTAMP,
    judge VARCHAR, budget_usd DECIMAL(18, 9), spent_usd DECIMAL(18, 9), status VARCHAR,
    config_json VARCHAR);
CREATE TABLE IF NOT EXISTS provider_events(
    run_id VARCHAR, provider VARCHAR, at_seconds DOUBLE, event VARCHAR,
    concurrency DOUBLE, retry_after DOUBLE);
"""

# A file of an older schema is brought up to this one in place when it is opened: the
# tables added since are created by DDL, and these statements add the columns (before
# schema 5 every trial of a run played the run's one world: its world_seed, else 2026;
# before schema 6 every reply's usage was the server's; before schema 9 a reply was kept
# only as the provider sent it, so its text, reasoning and calls are read out of that once;
# before schema 8 a trial's score
# was stored as final_net_assets, in the network its final bank balance, so that is its
# score and stays its final_net_assets: the stock it held then is not known).
UPGRADE_FROM = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
UPGRADE = """
ALTER TABLE exchanges ADD COLUMN IF NOT EXISTS usage_counted BOOLEAN;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS world_seeds VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS world_salt_sha256 VARCHAR;
ALTER TABLE trials ADD COLUMN IF NOT EXISTS world_seed INTEGER;
ALTER TABLE trials ADD COLUMN IF NOT EXISTS score DOUBLE;
UPDATE trials SET score = final_net_assets WHERE score IS NULL;
ALTER TABLE exchanges ADD COLUMN IF NOT EXISTS reply_json VARCHAR;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS carried_tokens INTEGER;
ALTER TABLE exchanges ADD COLUMN IF NOT EXISTS purpose VARCHAR;
ALTER TABLE trials ADD COLUMN IF NOT EXISTS net_transfers DOUBLE;
UPDATE exchanges SET purpose = 'act' WHERE purpose IS NULL;
UPDATE exchanges SET reply_json = json_object(
    'text', coalesce(json_extract_string(response_json, '$.choices[0].message.content'), ''),
    'reasoning', coalesce(json_extract_string(response_json,
                                              '$.choices[0].message.reasoning_content'), ''),
    'tool_calls', coalesce(json_extract(response_json, '$.choices[0].message.tool_calls'),
                           json('[]')))
    WHERE reply_json IS NULL AND response_json IS NOT NULL;
UPDATE runs SET world_seeds = '[' || coalesce(json_extract_string(config_json, '$.world_seed'),
    '2026') || ']' WHERE world_seeds IS NULL;
UPDATE trials SET world_seed = (SELECT json_extract_string(r.world_seeds, '$[0]')::INTEGER
    FROM runs r WHERE r.run_id = trials.run_id) WHERE world_seed IS NULL;
"""

# columns per table, in order: the appended rows' fields (``_rows``); a record table's
# columns come with its rows (``Append.columns``)
COLUMNS: dict[str, tuple[str, ...]] = {cls.TABLE: cls.__slots__ for cls in APPENDED}
