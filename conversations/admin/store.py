"""The stored conversations in the admin: read-only (they change by ingest and the erase path
only)."""

from __future__ import annotations

from django.contrib import admin

from ..models import (
    Conversation,
    Exchange,
    ReprojectionJob,
    UnknownBlockType,
)
from .base import ReadOnlyAdmin


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    """Conversations by the ids people have in hand: the chat backend's and the customer's
    (searched exactly, like the console's search box)."""

    list_display = (
        "id",
        "external_id",
        "customer_external_id",
        "queue",
        "status",
        "message_count",
        "exchange_count",
        "last_activity_at",
    )
    list_filter = ("queue", "status")
    search_fields = ("=id", "=external_id", "=customer_external_id")
    fields = (
        "id",
        "external_id",
        "customer_external_id",
        "queue",
        "status",
        "status_at",
        "message_count",
        "exchange_count",
        "created_at",
        "last_activity_at",
    )
    readonly_fields = fields


@admin.register(Exchange)
class ExchangeAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "conversation_id",
        "backend_id",
        "customer",
        "format",
        "response_model",
        "stop_reason",
        "truncated",
        "refusal",
        "history_rewritten",
        "created_at",
    )
    list_filter = ("format", "truncated", "refusal", "history_rewritten", "streamed")
    list_select_related = ("conversation",)
    search_fields = ("=conversation__external_id", "=conversation__customer_external_id")
    raw_id_fields = ("conversation",)
    exclude = ("settings_ciphertext",)  # encrypted request settings: never shown

    @admin.display(description="backend id", ordering="conversation__external_id")
    def backend_id(self, obj: Exchange) -> str:
        return obj.conversation.external_id

    @admin.display(description="customer", ordering="conversation__customer_external_id")
    def customer(self, obj: Exchange) -> str:
        return obj.conversation.customer_external_id


@admin.register(UnknownBlockType)
class UnknownBlockTypeAdmin(ReadOnlyAdmin):
    """Block types the code has not classified. They are treated as NEVER (never rendered) until
    a developer classifies them in ``conversations/blocks.py``."""

    list_display = ("format", "provider_type", "seen_count", "first_seen_at", "last_seen_at")
    list_filter = ("format",)


@admin.register(ReprojectionJob)
class ReprojectionJobAdmin(ReadOnlyAdmin):
    list_display = ("id", "reason", "status", "progress", "created_at", "finished_at")
    list_filter = ("status",)

    @admin.display(description="progress")
    def progress(self, obj: ReprojectionJob) -> str:
        return f"{obj.done} / {obj.total} ({obj.percent}%)"
