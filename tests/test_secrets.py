"""Redaction, layer by layer: each of its defences is tested on a secret that only that
defence can catch, so that dropping any one of them fails a test (the canary tests of
the orchestrator are caught by several layers at once)."""

from __future__ import annotations

import pytest

from vendbench._secrets import MASK, redact, redact_json, secret_values

# Shaped like a Gemini key: no pattern knows it, only its environment value gives it away.
GEMINI = "AIzaSyD4m9QeXq7vT2nBcW8rL5kJ0pZ3hUy6fGs"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    import os

    for name in list(os.environ):
        if any(word in name.upper() for word in ("KEY", "TOKEN", "SECRET", "PASSWORD",
                                                 "CREDENTIAL")):
            monkeypatch.delenv(name)


def test_the_value_of_a_credential_variable_is_masked_wherever_it_appears(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI)
    text = f"401 from generativelanguage: key={GEMINI}&alt=sse; echoed {GEMINI}"
    assert redact(text) == f"401 from generativelanguage: key={MASK}&alt=sse; echoed {MASK}"
    assert redact_json({"error": {"message": f"bad key {GEMINI}", "code": 401}}) == \
        {"error": {"message": f"bad key {MASK}", "code": 401}}


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "HF_TOKEN", "DB_PASSWORD",
                                  "my_client_secret", "GOOGLE_APPLICATION_CREDENTIALS"])
def test_every_credential_like_name_counts(monkeypatch, name):
    monkeypatch.setenv(name, "s3cr3t-value-0042")
    assert secret_values() == ["s3cr3t-value-0042"]
    assert redact("it said s3cr3t-value-0042") == f"it said {MASK}"


def test_other_variables_and_short_values_are_left_alone(monkeypatch):
    monkeypatch.setenv("HOME_DIRECTORY", "/home/operator-0042")   # not a credential name
    monkeypatch.setenv("LIMIT_TOKEN", "1234567")                   # 7 characters: too short
    monkeypatch.setenv("EXACT_TOKEN", "12345678")                  # 8: long enough
    assert secret_values() == ["12345678"]
    assert redact("/home/operator-0042 1234567 12345678") == f"/home/operator-0042 1234567 {MASK}"


def test_the_longest_secret_is_masked_first(monkeypatch):
    # the short one sorts after the long one alphabetically, and sits inside it
    monkeypatch.setenv("A_TOKEN", "zz-inner-secret")
    monkeypatch.setenv("B_TOKEN", "aa-zz-inner-secret-99")
    assert secret_values() == ["aa-zz-inner-secret-99", "zz-inner-secret"]
    assert redact("x aa-zz-inner-secret-99 y zz-inner-secret") == f"x {MASK} y {MASK}"


def test_extra_values_are_masked_even_when_not_in_the_environment():
    assert redact("value qwertyuiop", ["qwertyuiop"]) == f"value {MASK}"
    assert redact_json(["qwertyuiop", {"k": "qwertyuiop!"}], ["qwertyuiop"]) == \
        [MASK, {"k": f"{MASK}!"}]
    assert redact("nothing here", [""]) == "nothing here"          # an empty value is no secret


@pytest.mark.parametrize("text,expected", [
    # a bearer token, whatever its shape; the word "Bearer" stays
    ("Authorization header: Bearer abc.DEF-123_x", f"Authorization header: Bearer {MASK}"),
    ("bearer z", f"bearer {MASK}"),
    # key-shaped strings, with their prefix
    ("leaked sk-proj-AbC123xyz789 here", f"leaked {MASK} here"),
    ("rk_live_51Habcdefgh and pk-test-12345678", f"{MASK} and {MASK}"),
    # assignments to key-like names: the name stays, the value goes
    ('{"api_key": "zz9-plain-value"}', '{"api_key": "' + MASK + '"}'),
    ("x-api-key=topsecretvalue, next", f"x-api-key={MASK}, next"),
    ("authorization: sometoken", f"authorization: {MASK}"),
    # the scheme after a header name stays, its credential goes
    ("Authorization: Bearer abc.DEF-123_x", f"Authorization: Bearer {MASK}"),
    ("authorization: Basic dXNlcjpwYXNz", f"authorization: Basic {MASK}"),
    # a placeholder in advice is no secret: redaction never hides what to do
    ("send 'Authorization: Bearer <token>'", "send 'Authorization: Bearer <token>'"),
    # the user and password of a URL; the host and path stay
    ("nothing answers at http://alice:pw-0042@10.0.0.5:8000/v1 (refused)",
     f"nothing answers at http://{MASK}@10.0.0.5:8000/v1 (refused)"),
    ("https://token0042@host/v1", f"https://{MASK}@host/v1"),
    ("mail me at a@b.example or see https://example.com/a@b",
     "mail me at a@b.example or see https://example.com/a@b"),
])
def test_each_pattern_catches_its_own_shape(text, expected):
    assert redact(text) == expected


def test_text_without_secrets_is_unchanged():
    text = "Rate limit reached for gpt-4.1 in organization org-abc on tokens per min."
    assert redact(text) == text
    assert redact_json({"n": 3, "ok": True, "none": None, "s": text}) == \
        {"n": 3, "ok": True, "none": None, "s": text}


def test_mask_url_keeps_the_endpoint_and_hides_who_signs_in():
    from vendbench._secrets import mask_url

    assert mask_url("http://alice:pw@127.0.0.1:8000/v1") == f"http://{MASK}@127.0.0.1:8000/v1"
    assert mask_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert mask_url(mask_url("https://u:p@h/v1")) == f"https://{MASK}@h/v1"
