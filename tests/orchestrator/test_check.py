"""`vendbench check`: each LLM model's string, endpoint, key, price and reservation, then
one real request (tool called? the server's token count against ours), against the
local test server."""

from __future__ import annotations

import json

from vendbench.cli import main

from ..fakellm import FakeLLM, Reply
from .test_preflight import closed_port


def test_a_ready_model_is_reported_with_what_it_costs(llm, capsys):
    assert main(["check", "--models", "openai/fake", "--api-base", llm.url, "--price",
                 "openai/fake=0.4,1.6", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["models"]
    assert record["problems"] == [] and record["called_tool"] is True
    # the test server counts above our count (as real servers with their own
    # tokenizers do): check says by how much
    assert record["server_prompt_tokens"] > record["our_prompt_tokens"] > 0
    assert record["token_ratio"] == round(record["server_prompt_tokens"]
                                          / record["our_prompt_tokens"], 3)
    assert 0 < record["probe_cost_usd"] < record["reserves_usd"]     # reserved covers it
    assert llm.served == 1                                             # one request only


def test_every_problem_is_one_line_and_exit_2(capsys):
    silent = FakeLLM(script=lambda body: Reply(content="Hello! How can I help?"))
    with silent:
        code = main(["check", "--models", "openai/quiet", "foo/bar", "--api-base",
                     silent.url])
        err = capsys.readouterr().err
    assert code == 2
    assert "openai/quiet: answered without calling a tool" in err          # no tool call
    assert "openai/quiet: no price known" in err                           # no price
    assert "litellm knows no provider 'foo'" in err
    port = closed_port()
    assert main(["check", "--models", "openai/x", "--api-base",
                 f"http://127.0.0.1:{port}/v1", "--no-request"]) == 2
    assert f"nothing answers at http://127.0.0.1:{port}/v1" in capsys.readouterr().err


def test_no_request_sends_nothing(llm, capsys):
    assert main(["check", "--models", "openai/fake", "--api-base", llm.url, "--price",
                 "openai/fake=0.4,1.6", "--no-request", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["models"]
    assert "called_tool" not in record and record["reserves_usd"] > 0 and llm.served == 0


def test_a_price_litellm_only_guesses_is_no_price(llm, tmp_path, capsys):
    """litellm answers $0 for a model string its map only pattern-matches
    (``openai/gpt-9-turbo``): check used to say "ready" and forecast $0.00, and no budget
    could ever bind. Such a model needs --price, refused before the results file exists;
    an explicit zero is a price."""
    from vendbench.providers import litellm_price

    assert litellm_price("openai/gpt-9-turbo") is None
    assert litellm_price("ollama/llama3").input == 0          # listed at zero: a price
    assert litellm_price("openai/gpt-4.1-mini").input > 0
    assert main(["check", "--models", "openai/gpt-9-turbo", "--api-base", llm.url]) == 2
    out, err = capsys.readouterr()
    assert "NOT READY" in out and "$0.00" not in out
    assert "openai/gpt-9-turbo: no price known" in err
    db, served = tmp_path / "r.duckdb", llm.served
    assert main(["run", "--models", "openai/gpt-9-turbo", "--api-base", llm.url,
                 "--days", "2", "--budget", "1", "--db", str(db)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no price known for openai/gpt-9-turbo" in line and "--price" in line
    assert not db.exists() and llm.served == served           # nothing sent
    # given explicitly, a zero is a price (a local server): ready, and the run goes
    assert main(["check", "--models", "openai/gpt-9-turbo", "--api-base", llm.url,
                 "--price", "openai/gpt-9-turbo=0,0"]) == 0
    capsys.readouterr()
    assert main(["run", "--models", "openai/gpt-9-turbo", "--api-base", llm.url,
                 "--price", "openai/gpt-9-turbo=0,0", "--days", "1", "--db", str(db),
                 "--json"]) == 0
    (trial,) = json.loads(capsys.readouterr().out)["trials"]
    assert trial["status"] == "completed" and trial["cost_usd"] == 0


def test_a_server_that_never_answers_is_named_with_the_limit(llm, capsys, monkeypatch):
    """A server that accepts connections and never answers: check used to wait 72.7 s and
    say "unknown: TimeoutError: ". It waits its own limit and names the endpoint."""
    from vendbench.orchestrator import _check

    monkeypatch.setattr(_check, "PROBE_TIMEOUT_S", 0.5)
    llm.inject("hang", seconds=5)              # ten times the limit
    assert main(["check", "--models", "openai/fake", "--api-base", llm.url, "--price",
                 "openai/fake=0.4,1.6"]) == 2
    err = capsys.readouterr().err
    assert f"{llm.url} did not answer within 0.5 s" in err and "--request-timeout" in err
    assert "TimeoutError: \n" not in err and "unknown:" not in err


def test_a_dropped_connection_is_said_in_words(llm, capsys):
    """design §35.6: a connection the server closed read "unknown: InternalServerError:
    Connection error." (the retry kind, then litellm's class)."""
    llm.inject("drop", times=20)
    assert main(["check", "--models", "openai/fake", "--api-base", llm.url, "--price",
                 "openai/fake=0.4,1.6"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the request failed: the connection failed before a reply came (the server " \
           "closed it, or went away)" in err
    assert "unknown:" not in err
