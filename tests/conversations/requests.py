"""Minimal provider requests for recordings that kept only the response: each format kit's
``minimal_request`` (``conversations/formats/<name>/kit.py``)."""

from __future__ import annotations

import json
from typing import Any

from conversations.formats import get
from tests.providers import Recorded


def minimal_request(fmt: str) -> dict[str, Any]:
    return dict(get(fmt).kit.minimal_request)


def body_for(recorded: Recorded, *, conversation: str, customer: str = "cus_1") -> dict:
    body = {
        "conversation": conversation,
        "customer": customer,
        "format": recorded.format,
        "request": recorded.request
        or json.dumps(minimal_request(recorded.format), ensure_ascii=False),
        "labels": {"queue": "billing"},
    }
    if recorded.endpoint is not None:
        body["endpoint"] = recorded.endpoint
    if recorded.response is not None:
        body["response"] = recorded.response
    else:
        body["stream"] = recorded.stream
    return body
