"""The hooks of a profile (DESIGN section 19): what other rooms used to decide by a format's name,
asked of its profile instead (``profile.Profile`` holds them; this module says what each is).

- ``Capture``: which provider calls are the format's exchanges, and where its SDK keeps its
  HTTP client (the clients' capture tables are generated from it);
- ``Transport``, ``Probe``, ``SummaryFetch``: how the console calls the provider itself (the
  allowance probe; the review's read-time fetch of reasoning the stored exchange lacks);
- ``Endpoint``, ``EndpointRule``: the call's endpoint (the ingest body's ``endpoint``) and the
  model read from it;
- ``Pairing``, ``server_tool_words``, ``mcp_words``: which result answers which call, and how a
  server tool is worded;
- ``ROLES``: the provider's role names as the console's speakers;
- ``InputTokens``: one meaning of "input" on every page (``UsageProfile.counted``).

Pure: no Django, like every module of ``formats/``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from .traces import Trace


@dataclass(frozen=True, slots=True)
class InputTokens:
    """The input of one call, with one meaning on every page whatever the format: ``total`` is
    every input token the call was billed for; ``cached`` (read from the provider's cache) and
    ``written`` (written to it) are parts of ``total``, named inside it ("N in (M from cache)").
    None: not reported."""

    total: int | None
    cached: int | None = None
    written: int | None = None

    @property
    def fresh(self) -> int | None:
        """The part of ``total`` neither read from nor written to the cache (billed at the
        plain input price)."""
        if self.total is None:
            return None
        return max(0, self.total - (self.cached or 0) - (self.written or 0))


def count_input_as(
    includes_cache: bool, input_tokens: int | None, cached: int | None, written: int | None
) -> InputTokens:
    if input_tokens is None:
        return InputTokens(None, cached, written)
    if includes_cache:
        return InputTokens(input_tokens, cached, written)
    return InputTokens(input_tokens + (cached or 0) + (written or 0), cached, written)


@dataclass(frozen=True, slots=True)
class Capture:
    """The provider calls that are this format's exchanges: a ``POST`` whose URL path ends in
    one of ``paths``. Empty for a format captured where the chat backend answers its browser
    (the AI SDK UI stream). ``http_clients``: where the provider's official SDK client keeps
    its httpx client, as attribute paths (``_client``, ``_api_client._httpx_client``): the
    Python client's ``instrument()`` tries each. The clients' capture tables are generated
    from these (``manage.py write_format_tables``)."""

    paths: tuple[str, ...]
    http_clients: tuple[str, ...] = ("_client",)
    # The format is the stream the chat backend answers its browser with (the AI SDK UI message
    # stream): the JS client tees it there (``captureUIMessageStream``). One format at most.
    ui_stream: bool = False


@dataclass(frozen=True, slots=True)
class Transport:
    """How the console itself calls the provider (the allowance probe, the review's read-time
    summary fetch): the settings naming its address and its key (read from the environment by
    ``console/settings.py`` for every registered format, ``base_url`` their default), and the
    headers a key goes in."""

    base_url_setting: str  # "ANTHROPIC_BASE_URL"
    base_url: str  # its default, "https://api.anthropic.com"
    key_setting: str  # "ANTHROPIC_API_KEY"
    headers: Callable[[str], Mapping[str, str]]  # the key -> the request headers

    @property
    def settings(self) -> dict[str, str]:
        """The settings this transport reads, with their defaults."""
        return {self.base_url_setting: self.base_url, self.key_setting: ""}


@dataclass(frozen=True, slots=True)
class Probe:
    """How ``probe_allowance`` asks a provider directly (over the profile's ``transport``):
    ``path`` is the endpoint, ``{model}`` standing for the model (percent-encoded) where the
    provider puts it in the URL, and the two request bodies, ``at_budget`` and ``no_room``,
    built by ``bodies(model, budget, question)`` as ``(kind, max_tokens, budget_tokens,
    body)``."""

    path: str
    bodies: Callable[[str, int, str], list[tuple[str, int, int | None, dict[str, Any]]]]

    def path_for(self, model: str) -> str:
        return self.path.replace("{model}", quote_segment(model))


def quote_segment(value: str) -> str:
    """``value`` percent-encoded as one path segment (``/`` and ``:`` included)."""
    return quote(value, safe="")


@dataclass(frozen=True, slots=True)
class SummaryFetch:
    """Reasoning a stored exchange may lack that the provider keeps and gives back by the
    response's id (OpenAI Responses: ``GET /v1/responses/{id}``, the summaries of a response
    stored without them), fetched at read time for the review and never stored, over the
    profile's ``transport``. ``wanted(traces, reasoning_tokens)``: whether an exchange whose
    stored reasoning reads as ``traces`` is worth a fetch; ``items(body)``: the fetched body's
    messages as the format stores them, for its reasoning reader (``reviews/reasoning.py``
    stays its one caller)."""

    path: str  # "{id}" stands for the response id (percent-encoded)
    id_pattern: str  # a regular expression every id the provider issues matches, whole
    wanted: Callable[[Sequence[Trace], int | None], bool]
    items: Callable[[Any], list[Any]]

    def path_for(self, response_id: str) -> str | None:
        """The path for ``response_id``, or None for an id the provider does not issue."""
        if not re.fullmatch(self.id_pattern, response_id):
            return None
        return self.path.replace("{id}", quote_segment(response_id))


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The call's endpoint as the ingest body's ``endpoint`` gives it: the path and query it was
    sent to, without the host (``/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse``).
    ``path`` is percent-decoded (a Bedrock model id's ``%3A`` is ``:``); ``model`` is what the
    format's ``EndpointRule`` reads from it (None: it names none)."""

    raw: str
    path: str
    query: Mapping[str, str]
    model: str | None = None

    @classmethod
    def of(cls, raw: str) -> Endpoint:
        path, _, query = raw.partition("?")
        return cls(raw, unquote(path), dict(parse_qsl(query, keep_blank_values=True)))


@dataclass(frozen=True, slots=True)
class EndpointRule:
    """How a format reads the call's endpoint. ``model(endpoint)``: the model the path names
    (behind any gateway prefix: read from the end), or None. ``required``: the provider puts the
    model in the URL, so an exchange without an endpoint, or with one naming no model, is
    refused (400 at ``$.endpoint``); the model read is the exchange's requested model."""

    model: Callable[[Endpoint], str | None]
    required: bool = True


class Pairing(enum.StrEnum):
    """How a result finds the call it answers (the page's tool rows, the signals' tool facts)."""

    BY_ID = "by_id"  # the result names its call's id (tool_use_id, call_id, toolCallId)
    # No id: the result answers the earliest unanswered call of the same tool name (Gemini's
    # functionResponse without an id). A format whose results carry an id where the provider
    # sends one and none otherwise declares BY_ORDER: an id, when there, still pairs first.
    BY_ORDER = "by_order"


def no_server_tool(block_type: str, tool_name: str) -> str | None:
    """The default ``server_tool``: every tool of the format is run by the chat backend."""
    return None


# Server tools (run by the provider, not by the chat backend), by what they did: the words a
# profile's ``server_tool`` hook may use (``server_tool_words``).
SERVER_TOOLS: dict[str, str] = {
    "web_search": "Searched the web",
    "web_search_preview": "Searched the web",
    "web_fetch": "Fetched a web page",
    "code_execution": "Ran code",
    "bash_code_execution": "Ran a command in the code sandbox",
    "text_editor_code_execution": "Edited a file in the code sandbox",
    "code_interpreter": "Ran code",
    "file_search": "Searched files",
    "image_generation": "Generated an image",
    "computer": "Used a computer",
    "computer_use": "Used a computer",
    "local_shell": "Ran a shell command",
    "shell": "Ran a shell command",
    "tool_search_tool_regex": "Searched its tools",
    "tool_search_tool_bm25": "Searched its tools",
    "google_search": "Searched the web",
    "url_context": "Fetched a web page",
}


def server_tool_words(name: str) -> str:
    """What the server tool ``name`` did, in words (``SERVER_TOOLS``, else its name)."""
    return SERVER_TOOLS.get(name, f"Used the provider's {name.replace('_', ' ')} tool")


def mcp_words(tool_name: str) -> str:
    return f"Called {tool_name or 'a tool'} on an MCP server"


# The console's roles (the page's speakers), and the provider role names every format shares.
CONSOLE_ROLES = ("customer", "assistant", "tool", "system", "developer")
ROLES: Mapping[str, str] = {
    "user": "customer",
    "assistant": "assistant",
    "tool": "tool",
    "system": "system",
    "developer": "developer",
}
