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
