"""The chat backend's API: one APIView per operation (DESIGN section 5)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..continuation import continuation_envelope
from ..formats import FormatError
from ..formats.base import FORMAT_ERRORS
from ..ingest import body
from ..ingest.body import exchange_input
from ..ingest.examples import EXAMPLES
from ..ingest.guards import Refused
from ..models import ServiceToken
from ..replay import envelope
from ..selectors import (
    NoSuchExchange,
    conversation_by_external_id,
    conversation_continuation,
    conversation_message_raws,
)
from ..services import (
    IngestConflict,
    body_sha256,
    conversation_ingest_exchange,
    conversation_record_event,
)
from . import schema  # noqa: F401  (registers the authentication scheme with drf-spectacular)
from .errors import ApiError, check_query
from .serializers import (
    ErrorSerializer,
    EventInputSerializer,
    EventOutputSerializer,
    ExchangeOutputSerializer,
)

_ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="bad input; nothing was stored"),
    401: OpenApiResponse(
        ErrorSerializer, description="no service token, or not a valid one (`not_authenticated`)"
    ),
    404: OpenApiResponse(
        ErrorSerializer,
        description="no such conversation (`not_found`): missing and forbidden look the same",
    ),
}


def _error_example(
    name: str, code: str, detail: str, field: str, at: str | None = None
) -> OpenApiExample:
    return OpenApiExample(
        name,
        value={"error": code, "detail": detail, "field": field, "at": at or f"$.{field}"},
        response_only=True,
        status_codes=["400"],
    )


def _codes(codes: dict[str, str]) -> str:
    return "\n".join(f"- `{code}`: {meaning}" for code, meaning in codes.items())


# The ingest endpoint's errors, each described: the body's own codes come from its one definition
# (ingest/body.py), so this page lists exactly what the checks raise.
_INGEST_ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="Bad input; nothing was stored. `field` names the body field, `at` the JSON "
        "path. The body's own checks (`at` in the body, `$.labels.queue`):\n\n"
        + _codes(body.ERRORS)
        + "\n\nA provider body that does not fit its format (`field` is `request`, `response` "
        "or `stream`, `at` the path inside it, `$.messages[0].content`):\n\n"
        + _codes(FORMAT_ERRORS),
        examples=[
            _error_example("missing field", "required", "This field is required.", "customer"),
            _error_example(
                "provider body",
                "missing",
                "expected 'role' (string), but the key is missing",
                "request",
                "$.messages[0].role",
            ),
        ],
    ),
    401: _ERRORS[401],
    409: OpenApiResponse(
        ErrorSerializer,
        description="The body contradicts what is stored: `customer_mismatch` (the conversation "
        "belongs to another customer), `idempotency_key_reused` (the key came with another "
        "body).",
    ),
    410: OpenApiResponse(
        ErrorSerializer,
        description="`gone`: the conversation or its customer was deleted (an ingest guard, "
        "ingest/guards.py); the exchange is counted, not stored.",
    ),
    413: OpenApiResponse(
        ErrorSerializer, description="`too_large`: the body is over INGEST_MAX_BODY_BYTES."
    ),
    503: OpenApiResponse(
        ErrorSerializer,
        description="`unavailable`: the database cannot be reached for now (a restart, a "
        "failover); nothing was stored. Send it again after `Retry-After` seconds.",
    ),
}


def _conversation_or_404(external_id: str) -> Any:
    conversation = conversation_by_external_id(external_id)
    if conversation is None:
        raise ApiError("no such conversation", code="not_found", status_code=404)
    return conversation


class ExchangeCreateApi(APIView):
    token_scope = ServiceToken.Scope.INGEST

    @extend_schema(
        request={"application/json": body.json_schema()},
        examples=[
            OpenApiExample(fmt, value=example, request_only=True)
            for fmt, example in EXAMPLES.items()
        ],
        responses={
            201: OpenApiResponse(ExchangeOutputSerializer, description="stored"),
            200: OpenApiResponse(
                ExchangeOutputSerializer,
                description="a retry with the same Idempotency-Key and body: the first result",
            ),
            **_INGEST_ERRORS,
        },
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="a retry with the same key and body returns the first result",
            )
        ],
        summary="Store one provider exchange",
    )
    def post(self, request: Request) -> Response:
        # One definition checks the body and documents it (ingest/body.py), the same rules as
        # `manage.py ingest`, without per-request serializer machinery.
        try:
            data = exchange_input(request.data)
        except FormatError as exc:
            raise ApiError(exc.detail, code=exc.code, field=exc.field, at=exc.at) from None
        key = request.headers.get("Idempotency-Key")
        if key is not None and not 0 < len(key) <= 200:
            raise ApiError(
                "Idempotency-Key must be 1 to 200 characters",
                code="invalid",
                field="Idempotency-Key",
            )
        try:
            ingested = conversation_ingest_exchange(
                data=data,
                token=request.user,  # type: ignore[arg-type]
                idempotency_key=key,
                request_sha256=body_sha256(request.data) if key else None,
            )
        except FormatError as exc:
            raise ApiError(exc.detail, code=exc.code, field=exc.field, at=exc.at) from None
        except Refused as exc:
            raise ApiError(
                exc.detail, code=exc.code, field=exc.field, status_code=exc.status
            ) from None
        except IngestConflict as exc:
            raise ApiError(exc.detail, code=exc.code, field=exc.field, status_code=409) from None
        return Response(ingested.as_json(), status=201)


class ConversationMessagesApi(APIView):
    token_scope = ServiceToken.Scope.INGEST

    @extend_schema(
        responses={
            200: OpenApiResponse(
                description='{"messages":[...]}: each element byte-identical to the message '
                "object as first received"
            ),
            **_ERRORS,
        },
        parameters=[
            OpenApiParameter(
                "for",
                str,
                OpenApiParameter.QUERY,
                enum=["continuation"],
                description="`continuation`: what the provider needs to continue (the reasoning "
                "of earlier turns left out where its documentation says it is not needed, an open "
                "tool loop kept unmodified; conversations/continuation.py). The body then ends "
                'with `"left_out":{"elements":n,"bytes":n}`, also in the headers '
                "`Left-Out-Elements` and `Left-Out-Bytes`.",
            ),
            OpenApiParameter(
                "exchange",
                int,
                OpenApiParameter.QUERY,
                description="A conversation that branched (a regenerated answer, an edited "
                "message: conversations/branches.py) holds several paths. Without this "
                "parameter the replay is the latest exchange's path (its history and answer); "
                "with it, the path of that exchange (its id, as `POST /api/v1/exchanges` "
                "returned it). `404 not_found` for an exchange of another conversation.",
            ),
        ],
        summary="Replay a conversation byte for byte",
    )
    def get(self, request: Request, conversation: str) -> HttpResponse:
        check_query(request.query_params, frozenset({"for", "exchange"}))
        purpose = request.query_params.get("for")
        if purpose not in (None, "continuation"):
            # A query parameter is in no body: no JSON path (as check_query's errors).
            raise ApiError("for must be continuation, or absent", code="invalid", field="for")
        exchange = _exchange_id(request.query_params.get("exchange"))
        row = _conversation_or_404(conversation)
        try:
            raws = conversation_message_raws(row, exchange=exchange)
        except NoSuchExchange:
            raise ApiError(
                "no such exchange in this conversation",
                code="not_found",
                field="exchange",
                status_code=404,
            ) from None
        if purpose is None:
            return HttpResponse(envelope(raws), content_type="application/json")
        kept = conversation_continuation(row, raws, exchange=exchange)
        response = HttpResponse(continuation_envelope(kept), content_type="application/json")
        response["Continuation-Rule"] = kept.rule
        response["Left-Out-Elements"] = str(kept.left_out_elements)
        response["Left-Out-Bytes"] = str(kept.left_out_bytes)
        return response


def _exchange_id(value: str | None) -> int | None:
    """The ``exchange`` query parameter: an exchange id (a positive integer within a bigint)."""
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or not 0 < int(value) < 2**63:
        raise ApiError("exchange must be an exchange id", code="invalid", field="exchange")
    return int(value)


class ConversationEventCreateApi(APIView):
    token_scope = ServiceToken.Scope.INGEST

    @extend_schema(
        request=EventInputSerializer,
        responses={201: EventOutputSerializer, **_ERRORS},
        summary="Record what the customer did next",
    )
    def post(self, request: Request, conversation: str) -> Response:
        row = _conversation_or_404(conversation)
        serializer = EventInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        event = conversation_record_event(
            conversation=row,
            type=serializer.validated_data["type"],
            at=serializer.validated_data["at"],
            value=serializer.validated_data.get("value"),
        )
        return Response(EventOutputSerializer(event).data, status=status.HTTP_201_CREATED)
