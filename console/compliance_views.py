"""Compliance pages: deletion requests (submit with a preview, status and SLA, receipt) and legal
holds (place, release). Compliance staff and console admins only; anyone else gets 404.

Presentation only: ``retention.services`` submits, places and releases (and refuses with
``DeletionInvalid``); each page's data comes from an audited selector of
``retention.selectors.audited``, which checks access, reads and writes the audit row
(``deletion.viewed``, ``deletion.previewed``) in its own transaction; the view renders after it
has committed.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from conversations.permissions import require_compliance
from retention.models import DeletionRequest, LegalHold
from retention.selectors.audited import (
    DeletionPreview,
    deletion_preview_read,
    deletion_request_read,
    deletion_requests_read,
    legal_holds_read,
    receipt_export_read,
)
from retention.services import (
    DeletionInvalid,
    deletion_request_submit,
    deletion_request_submit_once,
    legal_hold_place,
    legal_hold_release,
)

from .forms import DeletionRequestForm, LegalHoldForm, ReleaseForm
from .views import csv_response, json_response

PAGE = 50


@login_required
def deletions(request: HttpRequest) -> HttpResponse:
    wanted = request.GET.get("status") or None
    if wanted is not None and wanted not in DeletionRequest.Status.values:
        wanted = None
    before = request.GET.get("before") or ""
    listing = deletion_requests_read(
        user=request.user,
        status=wanted,
        before=int(before) if re.fullmatch(r"[0-9]{1,18}", before) else None,
    )
    older = None
    if listing.older_than is not None:
        params = request.GET.copy()
        params["before"] = str(listing.older_than)
        older = params.urlencode()
    return render(
        request,
        "console/deletions.html",
        {
            "rows": listing.rows,
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
    require_compliance(request.user)
    form = DeletionRequestForm(request.POST or None)
    preview: DeletionPreview | None = None
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
            preview = deletion_preview_read(user=request.user, **target)
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
    return deletion_request_submit(reason=data["reason"], due=form.due_at(), actor=actor, **target)


@login_required
def deletion_detail(request: HttpRequest, pk: int) -> HttpResponse:
    detail = deletion_request_read(user=request.user, id=pk)
    return render(
        request,
        "console/deletion_detail.html",
        {
            "r": detail.request,
            "sla": detail.sla,
            "receipt": detail.receipt,
            "receipt_valid": detail.receipt_valid,
            "planned": detail.planned,
            "counted": detail.counted,
            "erased": detail.erased,
            "conversations": detail.conversations,
        },
    )


@login_required
def receipt_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """A completed request's receipt as CSV (one row per store) or JSON (the whole receipt,
    stores in words, the HMAC and whether it still matches)."""
    if fmt not in ("csv", "json"):
        raise Http404("no such format")
    export = receipt_export_read(user=request.user, id=pk, format=fmt)
    receipt = export.receipt
    name = f"deletion-{export.request.pk}-receipt"
    if fmt == "json":
        return json_response(
            name,
            {
                "request": export.request.pk,
                "reference": export.request.reference,
                "scope": export.request.scope,
                "reason": export.request.reason,
                "subject_hash": receipt.subject_hash,
                "issued_at": receipt.issued_at.isoformat(),
                "backup_horizon": (
                    receipt.backup_horizon.isoformat() if receipt.backup_horizon else None
                ),
                "conversations": receipt.conversations,
                "keys_destroyed": receipt.keys_destroyed,
                "stores": [
                    {"store": r.store, "table": r.label, "name": r.name, "rows": r.rows}
                    for r in export.erased
                ],
                "verification": receipt.verification,
                "hmac": receipt.hmac,
                "hmac_valid": export.valid,
            },
        )
    return csv_response(
        name,
        [
            "request",
            "issued_at",
            "backup_horizon",
            "store",
            "table",
            "name",
            "rows",
            "hmac",
            "hmac_valid",
        ],
        [
            [
                export.request.pk,
                receipt.issued_at.isoformat(),
                receipt.backup_horizon.isoformat() if receipt.backup_horizon else "",
                r.store,
                r.label,
                r.name,
                r.rows,
                receipt.hmac,
                "yes" if export.valid else "no",
            ]
            for r in export.erased
        ],
    )


@login_required
def holds(request: HttpRequest) -> HttpResponse:
    require_compliance(request.user)
    form = LegalHoldForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            hold = legal_hold_place(actor=request.user, **form.cleaned_data)
        except DeletionInvalid as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Legal hold {hold.pk} placed.")
            return redirect("legal-holds")
    listing = legal_holds_read(user=request.user)
    return render(
        request,
        "console/holds.html",
        {"form": form, "rows": listing.rows, "conversations": listing.conversations},
    )


@login_required
@require_POST
def hold_release(request: HttpRequest, pk: int) -> HttpResponse:
    require_compliance(request.user)
    form = ReleaseForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Legal hold {pk} not released: a release states its reason.")
        return redirect("legal-holds")
    try:
        legal_hold_release(hold=pk, reason=form.cleaned_data["reason"], actor=request.user)
    except LegalHold.DoesNotExist:
        raise Http404("no such legal hold") from None
    messages.success(request, f"Legal hold {pk} released; the requests it blocked run next tick.")
    return redirect("legal-holds")
