"""Admin for retention: retention classes are set here; deletion requests, legal holds,
tombstones and receipts are shown read-only (they change only through the services, audited:
the compliance pages, the API and the commands)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from conversations.admin import AuditedAdmin, ReadOnlyAdmin

from .models import DeletionRequest, LegalHold, Receipt, RetentionClass, Tombstone
from .services import retention_class_delete, retention_class_save


@admin.register(RetentionClass)
class RetentionClassAdmin(AuditedAdmin):
    list_display = ("__str__", "queue", "conversation_id", "days", "updated_at")
    search_fields = ("queue",)
    fields = ("queue", "conversation_id", "days")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        retention_class_save(retention_class=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        retention_class_delete(retention_class=obj, actor=request.user)


@admin.register(DeletionRequest)
class DeletionRequestAdmin(ReadOnlyAdmin):
    list_display = ("pk", "scope", "reference", "status", "requester", "requested_at", "due")
    list_filter = ("status", "scope")
    search_fields = ("reference",)
    exclude = ("subject", "conversation_external_ids")  # raw ids: the compliance pages show them


@admin.register(LegalHold)
class LegalHoldAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "scope",
        "queue",
        "conversation_id",
        "reason",
        "placed_at",
        "released_at",
    )
    list_filter = ("scope",)
    exclude = ("subject",)  # the raw customer id: the holds page shows it while it is kept


@admin.register(Tombstone)
class TombstoneAdmin(ReadOnlyAdmin):
    list_display = ("pk", "kind", "key_hash", "created_at", "refused_count", "last_refused_at")
    list_filter = ("kind",)


@admin.register(Receipt)
class ReceiptAdmin(ReadOnlyAdmin):
    list_display = ("request", "conversations", "keys_destroyed", "issued_at", "hmac")
