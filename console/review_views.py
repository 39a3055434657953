"""The review page: a live grantee states a purpose, then reads a conversation's reasoning.

Presentation only: ``conversations.reviews`` decides who may review, reads, redacts and audits.
A user without a live grant gets the 404 of a missing conversation (invariant 8). Every answer
here carries ``Cache-Control: no-store, private``: the page with the reasoning must not be kept
by the browser or any cache on the way, and the form is marked the same so no answer of this
URL ever is. Nothing is put in the session, the cache or a message; nothing is logged but ids.
"""

from __future__ import annotations

import logging

from django import forms
from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

import audit
from conversations.keystore.keys import KeyDestroyed
from conversations.models import ReviewGrant
from conversations.permissions import require_compliance
from conversations.reviews import (
    GrantRefused,
    ReviewNotAllowed,
    ReviewRateLimited,
    review_grant_live,
    review_grant_revoke,
    review_read,
)
from conversations.selectors.audited import review_grants_read

logger = logging.getLogger(__name__)

NO_STORE = "no-store, private"


class ReviewPurposeForm(forms.Form):
    purpose = forms.ChoiceField(
        label="Purpose", choices=ReviewGrant.Purpose.choices, help_text="why you need this now"
    )
    reference = forms.CharField(
        label="Ticket", max_length=100, help_text="the ticket id of this investigation"
    )
    statement = forms.CharField(
        label="What are you looking for?",
        min_length=10,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="in your words, for the audit log (redacted before it is recorded)",
    )


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = NO_STORE
    response["Pragma"] = "no-cache"
    return response


@sensitive_variables("result")
@sensitive_post_parameters("statement")
@login_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, pk: int) -> HttpResponse:
    grant = review_grant_live(user=request.user, conversation_id=pk)
    if grant is None:
        raise Http404("no such conversation")
    if request.method == "GET":
        form = ReviewPurposeForm(initial={"purpose": grant.purpose, "reference": grant.reference})
        return _no_store(
            render(request, "console/review_form.html", {"form": form, "grant": grant})
        )
    form = ReviewPurposeForm(request.POST)
    if not form.is_valid():
        context = {"form": form, "grant": grant}
        return _no_store(render(request, "console/review_form.html", context, status=400))
    data = form.cleaned_data
    try:
        result = review_read(
            user=request.user,
            conversation_id=pk,
            purpose=data["purpose"],
            reference=data["reference"],
            statement=data["statement"],
        )
    except (ReviewNotAllowed, KeyDestroyed):
        raise Http404("no such conversation") from None
    except ReviewRateLimited as exc:
        context = {"grant": grant, "count": exc.count, "limit": exc.limit}
        return _no_store(render(request, "console/review_limited.html", context, status=429))
    except (audit.AuditError, DatabaseError) as exc:
        # No audit row, no read: the transaction rolled back and nothing is shown. The log line
        # names the failure's type only (a database error's text may quote the row).
        logger.error(
            "review of conversation %s by user %s not shown: the audit row could not be "
            "written (%s)",
            pk,
            request.user.pk,
            type(exc).__name__,
        )
        return _no_store(render(request, "console/review_error.html", {"grant": grant}, status=503))
    return _no_store(render(request, "console/review.html", {"review": result, "grant": grant}))


# --- compliance: who may review, and who reviewed unusually much -------------------------------


class RevokeForm(forms.Form):
    grant = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    reason = forms.CharField(label="Reason", max_length=300, required=False)


@login_required
@require_http_methods(["GET", "POST"])
def review_grants(request: HttpRequest) -> HttpResponse:
    """Compliance staff and admins: review grants of the last 30 days (live first in mind,
    revocable here, audited) and review alerts. Granting stays with admins (admin, command)."""
    if request.method == "POST":
        require_compliance(request.user)
        form = RevokeForm(request.POST)
        if form.is_valid():
            try:
                review_grant_revoke(
                    grant_id=form.cleaned_data["grant"],
                    actor=request.user,
                    reason=form.cleaned_data["reason"] or "revoked by compliance",
                )
            except GrantRefused as exc:
                return HttpResponse(str(exc), status=409, content_type="text/plain")
            return redirect("review-grants")
        return HttpResponse("bad request", status=400, content_type="text/plain")
    listing = review_grants_read(user=request.user)
    return render(
        request, "console/review_grants.html", {"rows": listing.rows, "alerts": listing.alerts}
    )
