"""Server profiles: each kind of server vendbench talks to, and its quirks, in one place
(design §21). A model's profile follows from its model string and its endpoint
(``profile_for``); the rest of vendbench asks the profile rather than knowing servers.

    openai      openai/… on OpenAI's API: prefixes of 1,024+ tokens cached by
                ``prompt_cache_key``
    anthropic   anthropic/…: only prefixes ending at a ``cache_control`` mark cached
    gemini      gemini/…, vertex_ai/…: cached implicitly; a reply's thought signatures
                (on its tool calls, litellm's ``provider_specific_fields`` and call ids)
                go back with it; an assistant message that only calls tools has no text
                (Gemini refuses an empty text part)
    deepseek    deepseek/…: cached implicitly; a reply's ``reasoning_content`` goes back
                with it (its thinking mode asks for it within a turn of tool calls)
    hosted      any other provider litellm knows (openrouter/, …): cached implicitly, or
                not at all
    local       any model string at an endpoint on this machine (llama.cpp's server,
                vLLM, Ollama): a cold prompt takes minutes on a few cores; llama.cpp
                ignores the tool schemas unless ``tool_choice`` is sent, reports a
                context overflow as ``n_prompt_tokens``/``n_ctx``, and its chat
                templates refuse an assistant message whose content is null

An assistant message's content is a string (``""`` for a reply that only calls tools):
llama.cpp's templates need it. Gemini is the exception: an empty text part is a 400
there, so its tool-call-only messages carry no content.

What a reply carries that the next request must send back untouched (design §24.1) is the
profile's ``sent_back``: Anthropic's signed ``thinking_blocks`` (thinking and redacted
thinking), Gemini's thought signatures, DeepSeek's ``reasoning_content``. How the
server counts it (``turn_only``): Anthropic counts only the current turn's thinking (the
assistant messages since the last user message that is more than tool results) and
strips earlier turns' from the context; the others count what is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

REMOTE_TIMEOUT_S = 120.0      # a request's default time limit
LOCAL_TIMEOUT_S = 600.0       # ... on a server of this machine (a cold prompt: 67-140 s
                              # on 2 cores, measured against llama.cpp)

# how a context-length error states the prompt's size and the window: (prompt, window)
Numbers = tuple[re.Pattern[str], re.Pattern[str]]


@dataclass(frozen=True, slots=True)
class ServerProfile:
    """One kind of server and what vendbench does differently for it."""

    kind: str
    cache: str                        # "openai", "anthropic" or "implicit" (``_wire``)
    timeout_s: float                  # a request's default time limit
    context_numbers: tuple[Numbers, ...] = ()   # its context-length error's wording
    more_context: str = "the server's context"  # how to give the server a larger one
    tools_hint: str = ""              # why a server might not show the model its tools
    sent_back: tuple[str, ...] = ()   # fields of a reply the next request carries back
    turn_only: bool = False           # what is sent back counts only in the current turn
    null_content: bool = False        # a reply with only tool calls is sent back textless

    @property
    def thinking_input(self) -> str:
        """How a reply's thinking comes back as input tokens: in the current turn only
        ("turn", Anthropic), wherever it is sent ("sent", DeepSeek's reasoning_content),
        or not at all ("none": only signatures, or nothing, go back)."""
        if self.turn_only:
            return "turn"
        return "sent" if "reasoning_content" in self.sent_back else "none"


_OPENAI_NUMBERS: Numbers = (         # OpenAI, vLLM: "maximum context length is 8192
    # tokens. However, your messages resulted in 9000 tokens" / "you requested 9500 tokens
    # (9000 in the messages, ...)"
    re.compile(r"(\d+) in the messages|messages resulted in (\d+) tokens"),
    re.compile(r"maximum context length is (\d+)"))
_ANTHROPIC_NUMBERS: Numbers = (      # "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(r"prompt is too long: (\d+) tokens"), re.compile(r"tokens > (\d+) maximum"))
_LLAMA_NUMBERS: Numbers = (          # llama.cpp: {"n_prompt_tokens": 9000, "n_ctx": 8192}
    re.compile(r"n_prompt_tokens\W+(\d+)"), re.compile(r"n_ctx\W+(\d+)"))
_GEMINI_NUMBERS: Numbers = (         # "The input token count (1200000) exceeds the maximum
    # number of tokens allowed (1048576)."
    re.compile(r"input token count \((\d+)\)"),
    re.compile(r"maximum number of tokens allowed \((\d+)\)"))
_LOCAL_TOOLS = ("some OpenAI-compatible servers, llama.cpp's among them, do unless "
                "tool_choice is sent; vendbench always sends it")

OPENAI = ServerProfile("openai", "openai", REMOTE_TIMEOUT_S, (_OPENAI_NUMBERS,))
ANTHROPIC = ServerProfile("anthropic", "anthropic", REMOTE_TIMEOUT_S, (_ANTHROPIC_NUMBERS,),
                          sent_back=("thinking_blocks",), turn_only=True)
GEMINI = ServerProfile("gemini", "implicit", REMOTE_TIMEOUT_S, (_GEMINI_NUMBERS,),
                       sent_back=("provider_specific_fields",), null_content=True)
DEEPSEEK = ServerProfile("deepseek", "implicit", REMOTE_TIMEOUT_S, (_OPENAI_NUMBERS,),
                         sent_back=("reasoning_content",))
HOSTED = ServerProfile("hosted", "implicit", REMOTE_TIMEOUT_S, (_OPENAI_NUMBERS,),
                       tools_hint=_LOCAL_TOOLS)
LOCAL = ServerProfile("local", "implicit", LOCAL_TIMEOUT_S,
                      (_LLAMA_NUMBERS, _OPENAI_NUMBERS), "llama.cpp: --ctx-size",
                      _LOCAL_TOOLS)
PROFILES = (OPENAI, ANTHROPIC, GEMINI, DEEPSEEK, HOSTED, LOCAL)
SERVER_PROFILES = {p.kind: p for p in PROFILES}
_BY_PREFIX = {"openai": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI,
              "vertex_ai": GEMINI, "deepseek": DEEPSEEK}


def profile_for(model: str, api_base: str | None = None) -> ServerProfile:
    """The profile of ``model`` (a litellm model string) served at ``api_base``."""
    if api_base and is_local(api_base):
        return LOCAL
    return wire_profile(model)


def wire_profile(model: str) -> ServerProfile:
    """The profile of ``model``'s API from its model string alone, wherever it is
    served: how it caches, what it wants sent back (a local stand-in for ``anthropic/…``
    speaks Anthropic's wire format as the real one does)."""
    return _BY_PREFIX.get(model.split("/", 1)[0], HOSTED)


def cache_family(model: str) -> str:
    """How ``model``'s API caches prompts, from its model string alone (a local server
    named ``openai/…`` gets the key it ignores; nothing else differs)."""
    return wire_profile(model).cache


def is_local(api_base: str) -> bool:
    """Whether an endpoint is on this machine."""
    host = urlsplit(api_base).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def context_numbers(text: str) -> tuple[int | None, int | None]:
    """The prompt size and context window a context-length error states, in any
    profile's wording (the server's kind is not always known from its endpoint)."""
    wordings = dict.fromkeys(n for profile in PROFILES for n in profile.context_numbers)
    for prompt_re, window_re in wordings:         # each once, though profiles share them
        prompt, window = _first(prompt_re.search(text)), _first(window_re.search(text))
        if prompt is not None or window is not None:
            return prompt, window
    return None, None


def _first(match: re.Match[str] | None) -> int | None:
    return None if match is None else int(next(g for g in match.groups() if g))
