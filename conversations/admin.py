"""Admin for the conversation store.

The admin is a human surface like any page: it shows projections (Block rows), never
``Message.raw_ciphertext``, which holds the deliberation, encrypted, for replay.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Block, Conversation, Exchange, ServiceToken, UnknownBlockType


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Conversations are erased by the retention clock's one erase path, not from here.
        return False


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ("id", "queue", "message_count", "exchange_count", "last_activity_at")
    list_filter = ("queue",)
    search_fields = ("=id",)
    fields = ("id", "queue", "message_count", "exchange_count", "created_at", "last_activity_at")
    readonly_fields = fields


@admin.register(Exchange)
class ExchangeAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "conversation_id",
        "format",
        "response_model",
        "stop_reason",
        "truncated",
        "refusal",
        "history_rewritten",
        "created_at",
    )
    list_filter = ("format", "truncated", "refusal", "history_rewritten", "streamed")
    raw_id_fields = ("conversation",)


@admin.register(Block)
class BlockAdmin(ReadOnlyAdmin):
    list_display = ("id", "message_id", "position", "block_class", "provider_type", "tool_name")
    list_filter = ("block_class", "provider_type")
    raw_id_fields = ("message", "conversation")


@admin.register(UnknownBlockType)
class UnknownBlockTypeAdmin(ReadOnlyAdmin):
    """Block types the code has not classified. They are treated as NEVER (never rendered) until
    a developer classifies them in ``conversations/blocks.py``."""

    list_display = ("format", "provider_type", "seen_count", "first_seen_at", "last_seen_at")
    list_filter = ("format",)


@admin.register(ServiceToken)
class ServiceTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "token_sha256", "created_at", "last_used_at")
    fields = ("name", "prefix", "created_at", "last_used_at", "revoked_at")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # tokens are created by `manage.py create_service_token`, which prints it once
