"""The chat backend's API: one APIView per operation (DESIGN section 5)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..formats import FormatError
from ..ingest.guards import Refused
from ..ingest.planning import exchange_input
from ..models import ServiceToken
from ..replay import envelope
from ..selectors import conversation_by_external_id, conversation_message_raws
from ..services import (
    IngestConflict,
    body_sha256,
    conversation_ingest_exchange,
    conversation_record_event,
)
from . import schema  # noqa: F401  (registers the authentication scheme with drf-spectacular)
from .errors import ApiError
from .serializers import (
    ErrorSerializer,
    EventInputSerializer,
    EventOutputSerializer,
    ExchangeInputSerializer,
    ExchangeOutputSerializer,
)

_ERRORS = {
    400: ErrorSerializer,
    401: ErrorSerializer,
    404: ErrorSerializer,
    409: ErrorSerializer,
    413: ErrorSerializer,
}
# Refused by an ingest guard (guards.py): the conversation or its customer was deleted.
_GONE = {410: ErrorSerializer}


def _conversation_or_404(external_id: str) -> Any:
    conversation = conversation_by_external_id(external_id)
    if conversation is None:
        raise ApiError("no such conversation", code="not_found", status_code=404)
    return conversation


class ExchangeCreateApi(APIView):
    token_scope = ServiceToken.Scope.INGEST

    @extend_schema(
        request=ExchangeInputSerializer,
        responses={
            201: ExchangeOutputSerializer,
            200: ExchangeOutputSerializer,
            **_ERRORS,
            **_GONE,
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
        # The serializer documents the body (OpenAPI); planning.exchange_input checks it, the
        # same rules as `manage.py ingest`, without per-request serializer machinery.
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
            status_code, body = conversation_ingest_exchange(
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
        return Response(body, status=status_code)


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
        summary="Replay a conversation byte for byte",
    )
    def get(self, request: Request, conversation: str) -> HttpResponse:
        row = _conversation_or_404(conversation)
        return HttpResponse(
            envelope(conversation_message_raws(row)), content_type="application/json"
        )


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
