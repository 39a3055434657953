"""The compliance API, for ticketing systems: deletion requests (preview, submit, status with the
SLA, receipt) and legal holds (place, release, list). Service tokens of scope ``compliance``
(``manage.py create_service_token NAME --scope compliance``); a chat backend token gets 403.

Customers and conversations are named by the chat backend's ids on the way in and never echoed
back: a request is known by its number and its ``reference`` (the ticket id; submitting the same
reference again returns the same request). Every read and write is audited, with the token as
the actor. Errors have the one shape of the API (``conversations/api/errors.py``).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import audit
from conversations.api.errors import ApiError, check_query
from conversations.api.serializers import (
    BoundedDateTimeField,
    ErrorSerializer,
    StrictCharField,
    StrictSerializer,
)
from conversations.models import ServiceToken

from .models import DeletionRequest, LegalHold
from .selectors import deletion_request_sla, deletion_requests, legal_holds
from .services import (
    DeletionInvalid,
    ReferenceReused,
    deletion_preview,
    deletion_request_submit_once,
    legal_hold_place,
    legal_hold_release,
    receipt_verify,
)

PAGE = 100
_DIGITS = re.compile(r"[0-9]{1,18}")  # str.isdigit() also accepts "²", which int() refuses
_ERRORS = {400: ErrorSerializer, 401: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer}


# --- Input ------------------------------------------------------------------------------------


class _Target(StrictSerializer):
    # Ids are matched exactly, as ingest stores them: never trimmed.
    customer = StrictCharField(max_length=200, required=False, trim_whitespace=False)
    conversations = serializers.ListField(
        child=StrictCharField(max_length=200, trim_whitespace=False),
        required=False,
        allow_empty=False,
        max_length=10_000,
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("customer" in attrs) == ("conversations" in attrs):
            raise serializers.ValidationError(
                {"customer": "name either a customer or conversations (not both)"}
            )
        return attrs


class DeletionPreviewInput(_Target):
    pass


class DeletionRequestInput(_Target):
    reason = StrictCharField(max_length=300)
    reference = StrictCharField(
        max_length=100, help_text="your ticket id: submitting it again returns the same request"
    )
    due = BoundedDateTimeField(
        required=False,
        future=timedelta(days=3660),
        help_text="when to execute (default: the next tick of the clock)",
    )


class LegalHoldInput(StrictSerializer):
    scope = serializers.ChoiceField(choices=LegalHold.Scope.choices)
    reason = StrictCharField(max_length=300)
    customer = StrictCharField(max_length=200, required=False, trim_whitespace=False)
    conversation = StrictCharField(max_length=200, required=False, trim_whitespace=False)
    queue = StrictCharField(max_length=100, required=False)


class ReleaseInput(StrictSerializer):
    reason = StrictCharField(max_length=300)


# --- Output -----------------------------------------------------------------------------------


def _receipt(request: DeletionRequest) -> dict[str, Any] | None:
    if request.status != DeletionRequest.Status.COMPLETED:
        return None
    receipt = getattr(request, "receipt", None)
    if receipt is None:
        return None
    return {
        "issued_at": receipt.issued_at,
        # After this instant no backup can restore what was erased (retention/backups.py).
        "backup_horizon": receipt.backup_horizon,
        "conversations": receipt.conversations,
        "counts": receipt.counts,
        "keys_destroyed": receipt.keys_destroyed,
        "verification": receipt.verification,
        "hmac": receipt.hmac,
        "hmac_valid": receipt_verify(receipt),
    }


def request_body(request: DeletionRequest) -> dict[str, Any]:
    sla = deletion_request_sla(request)
    blocked = (
        {"hold": request.blocked_by_id, "reason": request.blocked_reason}
        if request.status == DeletionRequest.Status.BLOCKED
        else None
    )
    return {
        "id": request.pk,
        "reference": request.reference,
        "scope": request.scope,
        "status": request.status,
        "reason": request.reason,
        "requester": request.requester,
        "requested_at": request.requested_at,
        "due": request.due,
        "deadline": sla.deadline,
        "sla": {"state": sla.state, "label": sla.label},
        "preview": request.preview,
        "conversations": len(request.conversation_ids),
        "conversations_erased": request.conversations_erased,
        "blocked": blocked,
        "error": request.error or None,
        "completed_at": request.completed_at,
        "receipt": _receipt(request),
    }


def hold_body(hold: LegalHold) -> dict[str, Any]:
    return {
        "id": hold.pk,
        "scope": hold.scope,
        "conversation": hold.conversation_id,
        "queue": hold.queue or None,
        "customer_hash": hold.subject_hash or None,
        "reason": hold.reason,
        "placed_by": hold.placed_by_label,
        "placed_at": hold.placed_at,
        "active": hold.released_at is None,
        "released_by": hold.released_by_label or None,
        "released_at": hold.released_at,
        "release_reason": hold.release_reason or None,
    }


def _invalid(exc: DeletionInvalid) -> ApiError:
    if isinstance(exc, ReferenceReused):
        return ApiError(
            str(exc), code="reference_reused", field=exc.field, at=f"$.{exc.field}", status_code=409
        )
    return ApiError(str(exc), code="invalid", field=exc.field, at=f"$.{exc.field}")


def _valid(serializer: serializers.Serializer) -> dict[str, Any]:
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _int_param(request: Request, name: str) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    if not _DIGITS.fullmatch(text):
        raise ApiError(f"{name} is a positive integer", code="invalid", field=name)
    return int(text)


# --- Views ------------------------------------------------------------------------------------


class DeletionRequestListApi(APIView):
    token_scope = ServiceToken.Scope.COMPLIANCE

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=DeletionRequest.Status.values),
            OpenApiParameter("before", int, description="the next page: ids below this one"),
        ],
        responses={200: dict, **_ERRORS},
        operation_id="deletion_requests_list",
        summary="Deletion requests, newest first, with status and SLA (100 a page)",
    )
    def get(self, request: Request) -> Response:
        check_query(request.query_params, frozenset({"status", "before"}))
        wanted = request.query_params.get("status")  # given empty: a 400 like any other value
        if wanted is not None and wanted not in DeletionRequest.Status.values:
            raise ApiError(
                f"status is one of {', '.join(DeletionRequest.Status.values)}",
                code="invalid",
                field="status",
            )
        with transaction.atomic():
            rows = list(
                deletion_requests(status=wanted, before=_int_param(request, "before"))[: PAGE + 1]
            )
            audit.record(
                "deletion.viewed",
                actor=request.user,
                page="api-list",
                results=len(rows[:PAGE]),
                filters=["status"] if wanted else [],
            )
        body: dict[str, Any] = {"requests": [request_body(r) for r in rows[:PAGE]], "next": None}
        if len(rows) > PAGE:
            body["next"] = rows[PAGE - 1].pk
        return Response(body)

    @extend_schema(
        request=DeletionRequestInput,
        responses={201: dict, 200: dict, 409: ErrorSerializer, **_ERRORS},
        operation_id="deletion_requests_create",
        summary="Submit a deletion request (the same reference again: the same request, 200)",
    )
    def post(self, request: Request) -> Response:
        data = _valid(DeletionRequestInput(data=request.data))
        try:
            row, created = deletion_request_submit_once(
                reference=data["reference"],
                reason=data["reason"],
                customer=data.get("customer", ""),
                conversations=data.get("conversations", ()),
                due=data.get("due"),
                actor=request.user,
            )
        except DeletionInvalid as exc:
            raise _invalid(exc) from None
        if not created:  # a retry: the existing request is shown, and that read is logged
            with transaction.atomic():
                audit.record(
                    "deletion.viewed", actor=request.user, page="api-retry", request=row.pk
                )
        status_code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(request_body(row), status=status_code)


class DeletionPreviewApi(APIView):
    token_scope = ServiceToken.Scope.COMPLIANCE

    @extend_schema(
        request=DeletionPreviewInput,
        responses={200: dict, **_ERRORS},
        operation_id="deletion_requests_preview",
        summary="Count what a deletion request would erase now (stores nothing but an audit row)",
    )
    def post(self, request: Request) -> Response:
        data = _valid(DeletionPreviewInput(data=request.data))
        customer = data.get("customer", "")
        ids, counts = deletion_preview(
            customer=customer, conversations=data.get("conversations", ())
        )
        with transaction.atomic():
            audit.record(
                "deletion.previewed",
                actor=request.user,
                subject=customer or None,
                scope="customer" if customer else "conversations",
                conversations=len(ids),
                rows=sum(counts.values()),
            )
        return Response({"conversations": len(ids), "rows": counts, "at": timezone.now()})


class DeletionRequestDetailApi(APIView):
    token_scope = ServiceToken.Scope.COMPLIANCE

    @extend_schema(
        responses={200: dict, **_ERRORS},
        operation_id="deletion_requests_retrieve",
        summary="One deletion request and its receipt",
    )
    def get(self, request: Request, pk: int) -> Response:
        check_query(request.query_params)
        with transaction.atomic():
            row = deletion_requests().filter(pk=pk).first()
            if row is None:
                raise ApiError("no such deletion request", code="not_found", status_code=404)
            audit.record("deletion.viewed", actor=request.user, page="api-detail", request=pk)
        return Response(request_body(row))


class LegalHoldListApi(APIView):
    token_scope = ServiceToken.Scope.COMPLIANCE

    @extend_schema(
        parameters=[OpenApiParameter("active", bool)],
        responses={200: dict, **_ERRORS},
        operation_id="legal_holds_list",
        summary="Legal holds, active first",
    )
    def get(self, request: Request) -> Response:
        check_query(request.query_params, frozenset({"active"}))
        flag = request.query_params.get("active")
        if flag not in (None, "true", "false"):
            raise ApiError("active is true or false", code="invalid", field="active")
        active = None if flag is None else flag == "true"
        with transaction.atomic():
            rows = list(legal_holds(active=active)[:1000])
            audit.record("deletion.viewed", actor=request.user, page="api-holds", results=len(rows))
        return Response({"holds": [hold_body(h) for h in rows]})

    @extend_schema(
        request=LegalHoldInput,
        responses={201: dict, **_ERRORS},
        operation_id="legal_holds_create",
        summary="Place a legal hold",
    )
    def post(self, request: Request) -> Response:
        data = _valid(LegalHoldInput(data=request.data))
        try:
            hold = legal_hold_place(
                scope=data["scope"],
                reason=data["reason"],
                customer=data.get("customer", ""),
                conversation=data.get("conversation", ""),
                queue=data.get("queue", ""),
                actor=request.user,
            )
        except DeletionInvalid as exc:
            raise _invalid(exc) from None
        return Response(hold_body(hold), status=status.HTTP_201_CREATED)


class LegalHoldReleaseApi(APIView):
    token_scope = ServiceToken.Scope.COMPLIANCE

    @extend_schema(
        request=ReleaseInput,
        responses={200: dict, **_ERRORS},
        operation_id="legal_holds_release",
        summary="Release a legal hold (the requests it blocked run on the next tick)",
    )
    def post(self, request: Request, pk: int) -> Response:
        data = _valid(ReleaseInput(data=request.data))
        hold = LegalHold.objects.filter(pk=pk).first()
        if hold is None:
            raise ApiError("no such legal hold", code="not_found", status_code=404)
        try:
            hold = legal_hold_release(hold=hold, reason=data["reason"], actor=request.user)
        except DeletionInvalid as exc:
            raise _invalid(exc) from None
        return Response(hold_body(hold))


urlpatterns = [
    path("deletion-requests", DeletionRequestListApi.as_view(), name="api-deletion-requests"),
    path("deletion-requests/preview", DeletionPreviewApi.as_view(), name="api-deletion-preview"),
    path(
        "deletion-requests/<int:pk>",
        DeletionRequestDetailApi.as_view(),
        name="api-deletion-request",
    ),
    path("legal-holds", LegalHoldListApi.as_view(), name="api-legal-holds"),
    path(
        "legal-holds/<int:pk>/release", LegalHoldReleaseApi.as_view(), name="api-legal-hold-release"
    ),
]
