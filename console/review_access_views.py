"""Asking for review access from the conversation page, and the deciders' answers: compliance
staff and admins, never the asker (``conversations/reviews/access.py`` decides who decides, gives
the grant, notifies and audits; this is presentation).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from conversations.models import ReviewGrant
from conversations.reviews import GrantRefused
from conversations.reviews.access import (
    review_access_decide,
    review_access_pending_read,
)
from conversations.reviews.grants import MAX_GRANT_DAYS
from conversations.services import conversation_review_ask


class ReviewAskForm(forms.Form):
    purpose = forms.ChoiceField(label="Purpose", choices=ReviewGrant.Purpose.choices)
    reference = forms.CharField(label="Ticket", max_length=100)
    days = forms.IntegerField(label="For how many days", min_value=1, max_value=MAX_GRANT_DAYS)


@login_required
@require_POST
def review_ask(request: HttpRequest, pk: int) -> HttpResponse:
    form = ReviewAskForm(request.POST)
    if not form.is_valid():
        for name, errors in form.errors.items():
            messages.error(request, f"{name}: {' '.join(str(e) for e in errors)}")
        return redirect("conversation-detail", pk)
    try:
        conversation_review_ask(actor=request.user, conversation_id=pk, **form.cleaned_data)
    except GrantRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            "Review access asked for: compliance staff or an admin will decide (they are told "
            "by e-mail and see it under Review requests). Where it stands is shown here.",
        )
    return redirect("conversation-detail", pk)


@login_required
def review_requests(request: HttpRequest) -> HttpResponse:
    rows = review_access_pending_read(user=request.user)
    return render(request, "console/review_requests.html", {"rows": rows})


@login_required
@require_POST
def review_request_decide(request: HttpRequest, request_id: int) -> HttpResponse:
    decision = request.POST.get("decision")
    if decision not in ("approve", "deny"):
        return HttpResponse(
            '{"error": "invalid", "detail": "decision must be approve or deny", '
            '"field": "decision", "at": "$.decision"}',
            status=400,
            content_type="application/json",
        )
    try:
        row = review_access_decide(
            actor=request.user, request_id=request_id, approve=decision == "approve"
        )
    except GrantRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Request {row.pk} {row.status}.")
    return redirect("review-requests")
