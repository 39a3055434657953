"""Input and output serializers of the chat-backend API (DESIGN section 5).

Fields are strict: a number is not a string, a string is not a number, unknown fields are refused.
Provider bodies (request, response, stream) are kept exactly as sent: never trimmed.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from ..models import ConversationEvent


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


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


def _body(**kwargs: Any) -> StrictCharField:
    return StrictCharField(trim_whitespace=False, allow_blank=False, **kwargs)


class ExchangeInputSerializer(StrictSerializer):
    """The body of ``POST /api/v1/exchanges``, for the OpenAPI schema. The checks themselves are
    ``planning.exchange_input`` (shared with ``manage.py ingest``)."""

    conversation = StrictCharField(min_length=1, max_length=200, trim_whitespace=False)
    customer = StrictCharField(min_length=1, max_length=200, trim_whitespace=False)
    format = StrictCharField(max_length=40)
    request = _body(help_text="the provider request body exactly as sent, as a JSON string")
    response = _body(required=False, help_text="the provider response body exactly as received")
    stream = _body(required=False, help_text="or: the raw SSE text exactly as received")
    started_at = serializers.DateTimeField(required=False)
    latency_ms = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1)
    labels = serializers.DictField(required=False, child=serializers.JSONField())


class ExchangeOutputSerializer(serializers.Serializer):
    conversation = serializers.CharField()
    exchange = serializers.IntegerField()
    sequences = serializers.ListField(child=serializers.IntegerField())
    history_rewritten = serializers.BooleanField()
    rewritten_at = serializers.IntegerField(allow_null=True)


class EventInputSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=ConversationEvent.Type.choices)
    at = serializers.DateTimeField()
    value = serializers.JSONField(required=False, allow_null=True)


class EventOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.CharField()
    at = serializers.DateTimeField()


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    detail = serializers.CharField()
    field = serializers.CharField(allow_null=True)
    at = serializers.CharField(allow_null=True)
