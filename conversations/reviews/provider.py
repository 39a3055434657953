"""The HTTP client for a provider's retrieve endpoint (OpenAI ``GET /v1/responses/{id}``).

Used by the review page only, when a stored exchange lacks reasoning its provider keeps and its
key is set: the response is fetched at read time and its reasoning shown, never stored. Which
provider, which path, which key and header are the format's (its profile's ``transport`` and
``summary``); this module only speaks HTTP. Timeouts on every phase
(``PROVIDER_TIMEOUT_SECONDS``), no redirects, a cap on the body size. Every failure is a
``ProviderError`` whose message is written for the reviewer and never quotes the provider's body
(which may hold the very content that must not be logged).

To add a provider: give its format's profile a ``transport`` and a ``summary``; the caller
(``selectors.py``) asks the profile which exchanges need a fetch.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from django.conf import settings

from ..formats.profile import SummaryFetch, Transport

__all__ = ["MAX_BODY_BYTES", "ProviderError", "client", "configured", "response_retrieve"]

# A Responses API response with its reasoning summaries is a few kilobytes; refuse anything huge.
MAX_BODY_BYTES = 5 * 1024 * 1024


class ProviderError(Exception):
    """The provider could not give the response; ``str()`` is the reviewer's explanation.
    ``unreachable``: it did not answer at all (a timeout, no connection), so asking again for
    another exchange in the same review would only wait again."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def configured(transport: Transport) -> bool:
    """Whether the key the transport names is set."""
    return bool(getattr(settings, transport.key_setting, ""))


def client(transport: Transport) -> httpx.Client:
    """A client of one provider for one review (its connection serves every exchange fetched
    in it)."""
    timeout = float(settings.PROVIDER_TIMEOUT_SECONDS)
    base = str(getattr(settings, transport.base_url_setting))
    key = str(getattr(settings, transport.key_setting))
    return httpx.Client(
        base_url=base.rstrip("/"),
        headers=dict(transport.headers(key)),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
        follow_redirects=False,
        trust_env=False,  # no proxy or netrc picked up from the environment
    )


def response_retrieve(
    http: httpx.Client, summary: SummaryFetch, response_id: str
) -> dict[str, Any]:
    """The response object, parsed. Raises ProviderError with a plain explanation."""
    path = summary.path_for(response_id)
    if path is None:
        raise ProviderError("the stored response id is not one the provider issues")
    try:
        with http.stream("GET", path) as response:
            status = response.status_code
            body = b""
            if status == 200:
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_BODY_BYTES:
                        raise ProviderError("the provider's answer was larger than expected")
    except httpx.TimeoutException:
        raise ProviderError(
            f"the provider did not answer within {settings.PROVIDER_TIMEOUT_SECONDS} seconds",
            unreachable=True,
        ) from None
    except httpx.HTTPError as exc:
        raise ProviderError(
            f"the provider could not be reached ({type(exc).__name__})", unreachable=True
        ) from None
    if status != 200:
        raise ProviderError(_status_message(status))
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        raise ProviderError("the provider's answer was not readable JSON") from None
    if not isinstance(parsed, dict):
        raise ProviderError("the provider's answer was not a response object")
    return parsed


def _status_message(status: int) -> str:
    if status in (401, 403):
        return f"the provider refused the configured API key (HTTP {status})"
    if status == 404:
        return (
            "the provider no longer has this response (HTTP 404: it was not stored, or its "
            "retention has passed)"
        )
    if status == 429:
        return "the provider is rate limiting this key (HTTP 429); try again later"
    if status >= 500:
        return f"the provider failed to answer (HTTP {status}); try again later"
    return f"the provider answered HTTP {status}"
