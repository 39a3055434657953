"""``POST /api/v1/live/chunks``: a provider stream forwarded while it streams (DESIGN section 10).

The same service tokens and scope as the ingest endpoint, the same body checks and error shape,
the same tombstones (410) and size limit; a chunk stores nothing in the database."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..cache_errors import CACHE_ERRORS
from ..formats import FormatError
from ..ingest.guards import ingest_check_many
from ..keystore.keys import KeyDestroyed
from ..live.body import chunk_input
from ..live.services import (
    LiveRefused,
    live_chunk_ingest,
)
from ..models import ServiceToken
from ..selectors import conversation_owner_by_external_id
from .errors import ApiError
from .serializers import ErrorSerializer


class LiveChunkCreateApi(APIView):
    token_scope = ServiceToken.Scope.INGEST

    @extend_schema(
        request={"application/json": {"type": "object"}},
        responses={
            202: OpenApiResponse(
                description='{"status": "published" | "held" | "duplicate" | "closed" | '
                '"not_stored", "next_seq": n}'
            ),
            400: OpenApiResponse(ErrorSerializer, description="bad input; nothing was kept"),
            401: OpenApiResponse(
                ErrorSerializer,
                description="no service token, or not a valid one (`not_authenticated`)",
            ),
            409: OpenApiResponse(
                ErrorSerializer, description="`customer_mismatch`, `gap_too_long`, `busy`"
            ),
            410: OpenApiResponse(ErrorSerializer, description="`gone`: deleted conversation"),
            413: OpenApiResponse(ErrorSerializer, description="`too_large`, `state_too_large`"),
            429: OpenApiResponse(ErrorSerializer, description="`too_many_exchanges`"),
            503: OpenApiResponse(
                ErrorSerializer,
                description="`unavailable`: Redis or the database down for now; send it again "
                "after `Retry-After` seconds",
            ),
        },
        summary="Forward a chunk of a provider stream, live",
    )
    def post(self, request: Request) -> Response:
        try:
            data = chunk_input(request.data)
        except FormatError as exc:
            raise ApiError(exc.detail, code=exc.code, field=exc.field, at=exc.at) from None
        refused = ingest_check_many([(data.conversation, data.customer)])
        if refused:
            r = refused[0]
            raise ApiError(r.detail, code=r.code, field=r.field, status_code=r.status)
        owner = conversation_owner_by_external_id(data.conversation)
        if owner is None:
            # A conversation's first exchange is seen once stored: live viewers watch a
            # conversation they can open, and there is none yet.
            return Response({"status": "not_stored", "next_seq": 0}, status=202)
        conversation_id, customer = owner
        if customer != data.customer:
            raise ApiError(
                "the conversation belongs to another customer",
                code="customer_mismatch",
                field="customer",
                status_code=409,
            )
        try:
            result = live_chunk_ingest(conversation_id=conversation_id, data=data)
        except CACHE_ERRORS:
            # Redis down: a live stream cannot be kept or published; the exchange's own POST
            # still stores it. Retry later (or not: nothing of the stored exchange depends on it).
            raise ApiError(
                "live streams are unavailable for now (Redis cannot be reached); the exchange's "
                "POST still stores it",
                code="unavailable",
                status_code=503,
            ) from None
        except LiveRefused as exc:
            raise ApiError(
                exc.detail, code=exc.code, field=exc.field, at=exc.at, status_code=exc.status
            ) from None
        except KeyDestroyed:
            raise ApiError("the conversation was deleted", code="gone", status_code=410) from None
        return Response({"status": result.status, "next_seq": result.next_seq}, status=202)
