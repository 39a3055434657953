"""Input and output serializers of the chat-backend API (DESIGN section 5).

Fields are strict: a number is not a string, a string is not a number, unknown fields are refused.
The ingest body has no serializer: ``ingest/body.py`` checks it and gives its schema, one
definition for the API, ``manage.py ingest`` and the OpenAPI page.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from rest_framework import serializers

from .. import bounds
from ..models import ConversationEvent


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class BoundedDateTimeField(serializers.DateTimeField):
    """An RFC 3339 timestamp held to ``bounds``: a real date and time, an offset within ±14:00,
    inside the settings' window (``future`` widens how far ahead: a deletion's due date)."""

    def __init__(self, *args: Any, future: timedelta | None = None, **kwargs: Any) -> None:
        self.future = future
        super().__init__(*args, **kwargs)

    def to_internal_value(self, value: Any) -> datetime:
        try:
            return bounds.parse_timestamp(value, bounds.Window.of(settings, future=self.future))
        except bounds.OutOfBounds as exc:
            raise serializers.ValidationError(exc.detail, code=exc.code) from None


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, naming the first one."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = [k for k in data if k not in self.fields]
            if unknown:
                raise serializers.ValidationError(
                    {unknown[0]: [serializers.ErrorDetail("unknown field", code="unknown_field")]}
                )
        return super().to_internal_value(data)


class ExchangeOutputSerializer(serializers.Serializer):
    conversation = serializers.CharField(help_text="the conversation id, as sent")
    exchange = serializers.IntegerField(help_text="the stored exchange's id")
    sequences = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="the sequence numbers of the messages this exchange added (history matched to "
        "what was stored is not added again)",
    )
    history_rewritten = serializers.BooleanField(
        help_text="the history sent changed what the path it continues holds (a message of the "
        "model's edited or dropped, messages reordered): the model sees another history than "
        "the one it produced"
    )
    rewritten_at = serializers.IntegerField(
        allow_null=True, help_text="the first differing position of the history, or null"
    )
    branch = serializers.CharField(
        help_text='the branch this exchange started, or "": `regenerated` (the same history '
        "without its answer), `edited` (the customer's message replaced), `restarted` "
        "(another message the model did not write); not a rewrite"
    )
    branched_at = serializers.IntegerField(
        allow_null=True, help_text="where the branch left the previous path (from 0), or null"
    )


class EventInputSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=ConversationEvent.Type.choices)
    at = BoundedDateTimeField()
    value = serializers.JSONField(required=False, allow_null=True)


class EventOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.CharField()
    at = serializers.DateTimeField()


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="a stable code, e.g. required, not_json, gone")
    detail = serializers.CharField(help_text="what is wrong, for a person")
    field = serializers.CharField(allow_null=True, help_text="the body field (or header) at fault")
    at = serializers.CharField(
        allow_null=True,
        help_text="the JSON path: in the body ($.labels.queue), or, for a provider body, inside "
        "that field's JSON ($.messages[0].content)",
    )
