"""``probe_allowance``: the two mis-sized requests of the readiness check, sent to the provider
with the key from settings, and how it answered, recorded per snapshot (``AllowanceProbe``).

The provider is the format's (its profile's ``probe`` and ``transport``: the path with the model
where the provider puts it in the URL, the settings of its address and key, the auth header).

1. ``at_budget``: ``max_tokens`` at the thinking budget (Anthropic: equal to ``budget_tokens``;
   OpenAI, which has no budget: a ``max_output_tokens`` below what high effort reasons for).
   Some providers refuse it (400), some accept it and cut the answer off.
2. ``no_room``: room for the reasoning and almost none for the answer (Anthropic: one token past
   the budget; OpenAI: a small ``max_output_tokens`` at high effort). The answer is truncated;
   the usage tells how much went to reasoning.

The question asked is fixed and harmless; the answers are parsed by the format's own reader
(``formats/``) for usage and finish reason, and not kept: only the outcome, the status, the
provider's error message (its own words about the request, never a conversation), the finish
reason and the token counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.utils import timezone

from ..formats import profile
from ..formats.profile import Transport
from ..formats.registry import FormatError, get
from ..models import AllowanceProbe

BUDGET = 1024
QUESTION = "In one sentence: why is the sky blue?"


@dataclass(frozen=True)
class Probe:
    kind: str
    max_tokens: int
    budget_tokens: int | None
    path: str
    body: dict[str, Any]


def _probes(fmt: str, model: str) -> tuple[Transport, list[Probe]]:
    """How to reach the provider and the two requests, from the format's profile (``probe``
    and ``transport``: the path carries the model where the provider puts it there)."""
    found = profile(fmt)
    spec = found.probe if found is not None else None
    if found is None or spec is None or found.transport is None:
        raise ValueError(f"probe_allowance does not speak {fmt!r}")
    path = spec.path_for(model)
    return found.transport, [
        Probe(kind, max_tokens, budget, path, body)
        for kind, max_tokens, budget, body in spec.bodies(model, BUDGET, QUESTION)
    ]


def _client(transport: Transport) -> httpx.Client:
    """A client for the provider the format's ``transport`` names: its address and key from the
    settings it names."""
    timeout = float(settings.PROVIDER_TIMEOUT_SECONDS)
    base = str(getattr(settings, transport.base_url_setting))
    headers = dict(transport.headers(str(getattr(settings, transport.key_setting))))
    return httpx.Client(
        base_url=base.rstrip("/"),
        headers=headers,
        timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
        follow_redirects=False,
        trust_env=False,
    )


def _error_message(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:300]
    return text[:300]


def allowance_probe(*, fmt: str, model: str) -> list[AllowanceProbe]:
    """Send both requests and record how the provider answered each."""
    transport, probes = _probes(fmt, model)
    rows = []
    with _client(transport) as client:
        for p in probes:
            request = json.dumps(p.body)
            row = AllowanceProbe(
                format=fmt,
                model=model,
                kind=p.kind,
                max_tokens=p.max_tokens,
                budget_tokens=p.budget_tokens,
                probed_at=timezone.now(),
            )
            response = client.post(
                p.path, content=request, headers={"content-type": "application/json"}
            )
            row.http_status = response.status_code
            if response.status_code >= 400:
                row.outcome = "refused"
                row.error = _error_message(response.text)
            else:
                try:
                    parsed = get(fmt).parse(
                        request=request, response=response.text, endpoint=p.path
                    )
                except FormatError as exc:
                    row.outcome = "unreadable"
                    row.error = str(exc)[:300]
                else:
                    params = parsed.params
                    row.snapshot = (params.response_model or "")[:200]
                    row.stop_reason = (params.stop_reason or "")[:60]
                    row.output_tokens = params.usage.output_tokens
                    row.reasoning_tokens = params.usage.reasoning_tokens
                    row.outcome = "truncated" if params.truncated else "answered"
            rows.append(row)
    # A refused request names no snapshot: the one that answered the other request of this run
    # is the snapshot behind the model asked for (at that moment).
    served = next((r.snapshot for r in rows if r.snapshot), "")
    for row in rows:
        row.snapshot = row.snapshot or served
        row.save()
    return rows
