"""Compliance pages: deletion requests (submit with a preview, status and SLA, receipt) and legal
holds (place, release). Compliance staff and console admins only; anyone else gets 404.

Presentation only: ``retention.services`` submits, places and releases (and refuses with
``DeletionInvalid``), ``retention.selectors`` reads. Every page writes its audit row in the
transaction of the read (``deletion.viewed``, ``deletion.previewed``).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

import audit
from retention.models import DeletionRequest, LegalHold
from retention.selectors import deletion_request_sla, deletion_requests, legal_holds
from retention.services import (
    DeletionInvalid,
    deletion_preview,
    deletion_request_submit,
    deletion_request_submit_once,
    legal_hold_place,
    legal_hold_release,
    receipt_verify,
)

from .forms import DeletionRequestForm, LegalHoldForm, ReleaseForm
from .views import require_auditor

PAGE = 50


@login_required
@transaction.atomic
def deletions(request: HttpRequest) -> HttpResponse:
    require_auditor(request)
    wanted = request.GET.get("status") or None
    if wanted is not None and wanted not in DeletionRequest.Status.values:
        wanted = None
    before = request.GET.get("before") or ""
    qs = deletion_requests(
        status=wanted, before=int(before) if re.fullmatch(r"[0-9]{1,18}", before) else None
    )
    rows = list(qs[: PAGE + 1])
    older = None
    if len(rows) > PAGE:
        rows = rows[:PAGE]
        params = request.GET.copy()
        params["before"] = str(rows[-1].pk)
        older = params.urlencode()
    audit.record(
        "deletion.viewed",
        actor=request.user,
        page="list",
        results=len(rows),
        filters=["status"] if wanted else [],
    )
    return render(
        request,
        "console/deletions.html",
        {
            "rows": [(r, deletion_request_sla(r)) for r in rows],
            "statuses": DeletionRequest.Status.values,
            "status": wanted,
            "older": older,
        },
    )


def _form_errors(form: DeletionRequestForm | LegalHoldForm, exc: DeletionInvalid) -> None:
    field = exc.field if exc.field in form.fields else None
    form.add_error(field, str(exc))


@login_required
def deletion_new(request: HttpRequest) -> HttpResponse:
    """GET: the form. POST ``preview``: what would be erased now, counted, with Confirm and Edit.
    POST ``confirm``: submitted (audited), then the request's page."""
    require_auditor(request)
    form = DeletionRequestForm(request.POST or None)
    preview: dict[str, Any] | None = None
    # "Edit" (from the preview) shows the form again, filled in: posted, never in a URL.
    if request.method == "POST" and "edit" not in request.POST and form.is_valid():
        data = form.cleaned_data
        target = {"customer": data["customer"], "conversations": data["conversations"]}
        if "confirm" in request.POST:
            try:
                row = _submit(form, target, request.user)
            except DeletionInvalid as exc:
                _form_errors(form, exc)
            else:
                messages.success(request, f"Deletion request {row.pk} submitted.")
                return redirect("deletion-detail", pk=row.pk)
        else:
            ids, counts = deletion_preview(**target)
            with transaction.atomic():
                audit.record(
                    "deletion.previewed",
                    actor=request.user,
                    subject=data["customer"] or None,
                    scope="customer" if data["customer"] else "conversations",
                    conversations=len(ids),
                    rows=sum(counts.values()),
                )
            missing = len(data["conversations"]) - len(ids) if data["conversations"] else 0
            preview = {"conversations": len(ids), "counts": counts, "missing": missing}
    return render(request, "console/deletion_new.html", {"form": form, "preview": preview})


def _submit(form: DeletionRequestForm, target: dict[str, Any], actor: Any) -> DeletionRequest:
    """Submit; with a ticket reference, once (the same reference again, as a double click on
    Confirm sends it, is the same request; for something else, ``ReferenceReused``)."""
    data = form.cleaned_data
    if data["reference"]:
        row, _ = deletion_request_submit_once(
            reference=data["reference"],
            reason=data["reason"],
            due=form.due_at(),
            actor=actor,
            **target,
        )
        return row
    with transaction.atomic():
        return deletion_request_submit(
            reason=data["reason"], due=form.due_at(), actor=actor, **target
        )


@login_required
@transaction.atomic
def deletion_detail(request: HttpRequest, pk: int) -> HttpResponse:
    require_auditor(request)
    row = deletion_requests().filter(pk=pk).first()
    if row is None:
        raise Http404
    receipt = getattr(row, "receipt", None) if row.status == "completed" else None
    audit.record("deletion.viewed", actor=request.user, page="detail", request=row.pk)
    return render(
        request,
        "console/deletion_detail.html",
        {
            "r": row,
            "sla": deletion_request_sla(row),
            "receipt": receipt,
            "receipt_valid": receipt_verify(receipt) if receipt else None,
            "planned": len(row.conversation_ids),
        },
    )


@login_required
def holds(request: HttpRequest) -> HttpResponse:
    require_auditor(request)
    form = LegalHoldForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            hold = legal_hold_place(actor=request.user, **form.cleaned_data)
        except DeletionInvalid as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Legal hold {hold.pk} placed.")
            return redirect("legal-holds")
    with transaction.atomic():
        rows = list(legal_holds()[:500])
        audit.record("deletion.viewed", actor=request.user, page="holds", results=len(rows))
    blocked = _blocked_counts([h.pk for h in rows if h.released_at is None])
    return render(
        request,
        "console/holds.html",
        {"form": form, "rows": [(h, blocked.get(h.pk, 0)) for h in rows]},
    )


def _blocked_counts(hold_ids: list[int]) -> dict[int, int]:
    """Requests each hold blocks now (one query)."""
    counted = (
        DeletionRequest.objects.filter(blocked_by_id__in=hold_ids, status="blocked")
        .values("blocked_by_id")
        .annotate(n=Count("pk"))
    )
    return {row["blocked_by_id"]: row["n"] for row in counted}


@login_required
@require_POST
def hold_release(request: HttpRequest, pk: int) -> HttpResponse:
    require_auditor(request)
    hold = LegalHold.objects.filter(pk=pk).first()
    if hold is None:
        raise Http404
    form = ReleaseForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Legal hold {pk} not released: a release states its reason.")
        return redirect("legal-holds")
    legal_hold_release(hold=hold, reason=form.cleaned_data["reason"], actor=request.user)
    messages.success(request, f"Legal hold {pk} released; the requests it blocked run next tick.")
    return redirect("legal-holds")
