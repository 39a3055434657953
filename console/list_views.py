"""The conversation list as CSV (issue 35): the rows the list's filters, order and bounds select
(the same query string as the page, so a bookmarked view exports as it shows), up to
``EXPORT_MAX`` of them, through the list's own audited selector (access, the one projection's
visible text for the last message, the audit row with page "list-export"). Only what the list
shows: ids, counts, flags, the latest model, the last visible message as the projection redacted
it; nothing of a reasoning block (the snippet is read from VISIBLE blocks only), and the backend's
conformance (a rewritten history) for console admins only, as on the page."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone

from conversations.permissions import is_console_admin, require_reader
from conversations.selectors.audited import conversation_list_read

from .forms import ConversationFilterForm
from .views import csv_response

EXPORT_MAX = 5000
COLUMNS = (
    "id", "conversation", "customer", "queue", "status", "messages", "model_calls", "tool_calls",
    "output_tokens", "slowest_ms", "flags", "model", "last_message_by", "last_message",
    "last_activity",
)  # fmt: skip


@login_required
def conversation_list_export(request: HttpRequest) -> HttpResponse:
    conformance = is_console_admin(request.user)
    form = ConversationFilterForm(request.GET, conformance=conformance)
    if not form.is_valid():
        require_reader(request.user)
        return HttpResponse(
            json.dumps({"error": "invalid", "detail": form.errors.get_json_data()}),
            status=400,
            content_type="application/json",
        )
    used = [name for name in form.changed_data if name not in form.NOT_FILTERS]
    listing = conversation_list_read(
        user=request.user,
        filters=form.filters(),
        used=used,
        limit=EXPORT_MAX,
        match=form.cleaned_data["match"],
        page="list-export",
    )
    if listing.go_to is not None:  # an exact id: the conversation itself
        return redirect(reverse("conversation-detail", args=[listing.go_to]))
    rows = []
    for c in listing.rows:
        extra = listing.extras.get(c.pk)
        flags = [
            name
            for name, on in (
                ("truncated", c.any_truncated),
                ("refusal", c.any_refusal),
                ("rewritten", c.any_rewritten and conformance),
            )
            if on
        ]
        snippet = (extra.snippet_role, extra.snippet) if extra else ("", "")
        counts = (c.message_count, c.exchange_count, c.tool_call_count)
        who = [c.pk, c.external_id, c.customer_external_id, c.queue, c.status]
        usage = [c.output_tokens, c.slowest_ms, " ".join(flags), extra.model if extra else ""]
        rows.append([*who, *counts, *usage, *snippet, c.last_activity_at.isoformat()])
    name = f"conversations-{timezone.localdate():%Y%m%d}"
    response = csv_response(name, list(COLUMNS), rows)
    response["Cache-Control"] = "no-store, private"
    return response
