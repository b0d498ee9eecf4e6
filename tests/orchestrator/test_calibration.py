"""The per-model token calibration, driven directly (design §6.1, §6.3): what it learns from
replies and context-length errors, and what it tells the run."""

from __future__ import annotations

import asyncio

import pytest

from vendbench.orchestrator._calibration import Calibration
from vendbench.providers import ContextLimit


def test_the_ratio_is_the_highest_seen_and_never_below_one():
    cal = Calibration(60_000, tools_tokens=0)
    assert (cal.ratio, cal.calibrated) == (1.0, False)
    cal.observe(1000, 800)                        # the server counts less: we keep ours
    assert (cal.ratio, cal.calibrated) == (1.0, True)
    cal.observe(1000, 1500)
    cal.observe(2000, 2400)                       # a lower ratio later does not undo it
    assert cal.ratio == 1.5 and cal.scale(1001) == 1502


@pytest.mark.parametrize("counted,reported", [(0, 100), (100, 0), (-5, 10)])
def test_a_reply_without_counts_teaches_nothing(counted, reported):
    cal = Calibration(60_000, tools_tokens=0)
    assert cal.observe(counted, reported) is None
    assert (cal.ratio, cal.calibrated) == (1.0, False)


def test_the_smallest_counts_still_count():
    cal = Calibration(60_000, tools_tokens=0)
    cal.observe(1, 2)
    assert cal.ratio == 2.0 and cal.calibrated
    low = Calibration(60_000, tools_tokens=0)
    low.observe(2, 1)
    assert low.ratio == 1.0 and low.calibrated


def test_without_tool_schemas_there_is_nothing_to_check():
    cal = Calibration(60_000, tools_tokens=0)
    assert cal.observe(100, 100) is None
    assert cal.observe(2000, 4000) is None        # a slope that would look like dropped tools


def test_a_context_error_with_the_servers_numbers():
    cal = Calibration(60_000, tools_tokens=0)
    learned = cal.overflowed(7000, ContextLimit(prompt_tokens=9000, context_tokens=8192), 512)
    assert cal.context_tokens == 8192 and cal.ratio == pytest.approx(9000 / 7000)
    assert learned == f"server context 8,192 tokens, {9000 / 7000:.2f} server tokens per " \
                      "counted token"
    assert cal.prompt_limit(512) == 8192 - 512


def test_a_context_error_with_only_the_window():
    cal = Calibration(60_000, tools_tokens=0)
    cal.overflowed(5000, ContextLimit(context_tokens=8192), 512)
    # what was sent did not fit 8192 − 512, so the server counts at least that much
    assert cal.context_tokens == 8192 and cal.ratio == pytest.approx((8192 - 512) / 5000)


def test_a_context_error_with_no_numbers_aims_lower():
    cal = Calibration(60_000, tools_tokens=0)
    cal.observe(1000, 1200)
    cal.overflowed(10_000, ContextLimit(), 1000)
    # it could not hold 12,000 server tokens: the prompt may take 90 % of that from now
    assert cal.context_tokens == int(12_000 * 0.9) + 1000 and cal.ratio == 1.2
    cal.overflowed(20_000, ContextLimit(), 1000)  # never grows back
    assert cal.context_tokens == int(12_000 * 0.9) + 1000
    cal.overflowed(5000, ContextLimit(prompt_tokens=8000), 1000)
    assert cal.ratio == 1.6 and cal.context_tokens == 11_800       # a prompt count alone


DROPPED = ("the server counts about {fixed} prompt tokens beyond the messages, while the "
           "tool schemas alone take about 3,000: it probably ignored the tools (some "
           "OpenAI-compatible servers, llama.cpp's among them, do unless tool_choice is "
           "sent; vendbench always sends it — check the server's tool-calling support)")


def test_dropped_tools_are_reported_once_from_the_first_reply():
    cal = Calibration(60_000, tools_tokens=3000)
    warning = cal.observe(3500, 600)              # 500 message tokens: no room for 3,000
    assert warning == DROPPED.format(fixed="600")
    assert cal.observe(3600, 700) is None         # said once…
    assert cal.observe(8000, 5100) is None        # …even when a later slope says it again


def test_the_dropped_tools_check_at_its_boundaries():
    exactly = Calibration(60_000, tools_tokens=3000)
    assert exactly.observe(3100, 1500) is None    # exactly half the schemas: not yet a sign
    assert exactly.observe(4100, 2500) == DROPPED.format(fixed="1,400")   # the slope is
    at_floor = Calibration(60_000, tools_tokens=3000)
    assert at_floor.observe(3100, 1600) is None
    assert at_floor.observe(4100, 2600) is None   # 1,500 at zero messages: exactly half, kept
    early = Calibration(60_000, tools_tokens=3000)
    assert early.observe(3400, 1600) is None      # 400 message tokens at first
    assert early.observe(3900, 2400) is None      # 500 more: under the 1,000 needed
    assert early.observe(4400, 3200) == DROPPED.format(fixed="960")
    steep = Calibration(60_000, tools_tokens=3000)
    steep.observe(4000, 1500)
    assert steep.observe(6000, 5500) == DROPPED.format(fixed="0")   # never below zero


def test_kept_tools_raise_no_warning_and_the_check_waits_for_a_measurable_rate():
    cal = Calibration(60_000, tools_tokens=3000)
    assert cal.observe(4000, 4100) is None        # plenty beyond the messages
    assert cal.observe(4500, 4600) is None
    slope = Calibration(60_000, tools_tokens=3000)
    assert slope.observe(3100, 1600) is None      # half the schemas at first sight: wait…
    assert slope.observe(3500, 2000) is None      # …too close to the first to measure
    # 2,900 more message tokens cost 4,400 more server tokens: at zero messages the
    # server counts 1600 − 100 × 4400/2900 ≈ 1,448, under half of the schemas
    assert slope.observe(6000, 6000) == DROPPED.format(fixed="1,448")


def test_a_model_that_never_called_a_tool_is_reported_with_the_evidence():
    advice = (". If the server ignored the tools (some OpenAI-compatible servers, llama.cpp's "
              "among them, do unless tool_choice is sent; vendbench always sends it), check "
              "its tool-calling support and chat template")
    cal = Calibration(60_000, tools_tokens=3000)
    assert cal.no_tool_calls(3) == "the model never called a tool (3 replies without one)" \
        + advice
    cal.observe(4000, 4400)
    assert cal.no_tool_calls(3) == (
        "the model never called a tool (3 replies without one); the server counted 4,400 "
        "prompt tokens for the last request, which we count at 4,000, 3,000 of them the "
        "tool schemas" + advice)


def test_until_calibrated_lets_one_request_through_then_everyone(monkeypatch):
    from vendbench.orchestrator import _calibration

    async def no_pause(seconds: float) -> None:
        pass

    monkeypatch.setattr(_calibration, "_pause", no_pause)    # the spacing: tested below

    async def main() -> list[str]:
        cal = Calibration(60_000, tools_tokens=0)
        order: list[str] = []

        async def request(name: str, answer: bool) -> None:
            async with cal.until_calibrated():
                order.append(f"{name} sent")
                await asyncio.sleep(0.01)
                if answer:
                    cal.observe(100, 150)
                order.append(f"{name} done")

        await asyncio.gather(request("a", False), request("b", True), request("c", True),
                             request("d", True))
        return order

    order = asyncio.run(main())
    # a failed without a reply: b went alone next; once b had answered, c and d together
    assert order[:4] == ["a sent", "a done", "b sent", "b done"]
    assert sorted(order[4:6]) == ["c sent", "d sent"]


def test_requests_held_until_calibrated_leave_spaced_in_the_order_they_came(monkeypatch):
    """Let go at once, the held requests' replies would come back in one wave."""
    from vendbench.orchestrator import _calibration

    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(_calibration, "_pause", pause)

    async def main() -> list[str]:
        cal = Calibration(60_000, tools_tokens=0)
        sent: list[str] = []
        first_sent = asyncio.Event()
        answer = asyncio.Event()

        async def request(name: str) -> None:
            async with cal.until_calibrated():
                sent.append(name)
                if name == "a":
                    first_sent.set()
                    await answer.wait()
                    cal.observe(100, 150)

        first = asyncio.ensure_future(request("a"))
        await first_sent.wait()
        held = [asyncio.ensure_future(request(n)) for n in ("b", "c", "d")]
        for _ in range(5):
            await asyncio.sleep(0)               # all three are waiting on the first
        assert sent == ["a"]
        answer.set()
        await asyncio.gather(first, *held)
        await request("e")                      # calibrated already: no wait at all
        return sent

    sent = asyncio.run(main())
    assert sent == ["a", "b", "c", "d", "e"]
    assert pauses == [0.02, 0.04]               # b at once, then c and d 20 and 40 ms later
    assert _calibration.RELEASE_SPREAD_S == 0.02


def test_advice_names_the_servers_context_when_it_is_the_smaller_one():
    """What a trial that overflowed is told to change: the server's context when the
    server said (or implied) it is below the configured window, else the window."""
    cal = Calibration(60_000, tools_tokens=0)
    assert cal.advice() == ("raise max_context_tokens (and the server's context) or lower "
                            "max_output_tokens")                       # nothing learned yet
    cal.overflowed(7000, ContextLimit(context_tokens=8192), 512)
    assert cal.advice() == ("the server's own context is 8,192 tokens, below the configured "
                            "max_context_tokens 60,000: start the server with a larger "
                            "context (llama.cpp: --ctx-size) or lower max_output_tokens")
    guessed = Calibration(60_000, tools_tokens=0)
    guessed.observe(1000, 1000)
    guessed.overflowed(10_000, ContextLimit(), 1000)                  # no number: estimated
    assert guessed.advice().startswith("the server's own context is about 10,000 tokens, "
                                       "below the configured max_context_tokens 60,000")
    wide = Calibration(8192, tools_tokens=0)                          # the window is smaller
    wide.overflowed(7000, ContextLimit(context_tokens=16_384), 512)
    assert wide.advice().startswith("raise max_context_tokens")
    equal = Calibration(8192, tools_tokens=0)                         # the same: the window
    equal.overflowed(7000, ContextLimit(context_tokens=8192), 512)
    assert equal.advice().startswith("raise max_context_tokens")


def test_a_hosted_server_gets_the_generic_hint_about_dropped_tools():
    """Only a local server's profile names its chat template; the others get the generic
    reason."""
    from vendbench.providers._profiles import OPENAI

    cal = Calibration(60_000, tools_tokens=3000, profile=OPENAI)
    warning = cal.observe(3500, 600)
    assert warning is not None
    assert "it probably ignored the tools (a server may drop what it cannot template" in warning
