"""Reasoning review grants and alerts in the admin (conversations/reviews/)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

# --- Reasoning review grants and alerts (reviews.py) --------------------------------------------
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from ..models import (
    ReviewAlert,
    ReviewGrant,
)
from ..reviews import (
    GrantRefused,
    review_grant_check,
    review_grant_create,
    review_grant_revoke,
)
from .base import AuditedAdmin, ReadOnlyAdmin


class ReviewGrantForm(forms.ModelForm):
    class Meta:
        model = ReviewGrant
        fields = ["reviewer", "conversation", "purpose", "reference", "expires_at"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.instance.pk is None and not self.errors:
            try:
                review_grant_check(
                    reviewer=data.get("reviewer"),
                    purpose=data.get("purpose", ""),
                    reference=data.get("reference", ""),
                    expires_at=data["expires_at"],
                )
            except GrantRefused as exc:
                raise ValidationError(str(exc)) from None
        return data


@admin.register(ReviewGrant)
class ReviewGrantAdmin(AuditedAdmin):
    """Grant a reviewer the reasoning review of one conversation (``review_grant_create``, audited);
    revoke with the list's action (``review_grant_revoke``, audited). Grants are records: never
    edited or deleted."""

    form = ReviewGrantForm
    list_display = (
        "id",
        "reviewer",
        "conversation_id",
        "backend_id",
        "purpose",
        "reference",
        "granted_by",
        "granted_at",
        "expires_at",
        "state",
    )
    list_filter = ("purpose",)
    search_fields = ("reviewer__username", "reference", "=conversation__id")
    raw_id_fields = ("conversation",)
    actions = ["revoke"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReviewGrant]:
        return (
            super().get_queryset(request).select_related("reviewer", "granted_by", "conversation")
        )

    @admin.display(description="backend id", ordering="conversation__external_id")
    def backend_id(self, obj: ReviewGrant) -> str:
        return obj.conversation.external_id

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ()
        return (
            "reviewer",
            "conversation",
            "purpose",
            "reference",
            "granted_by",
            "granted_at",
            "expires_at",
            "revoked_at",
            "revoked_by",
        )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ReviewGrantForm.Meta.fields
        return self.get_readonly_fields(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="state")
    def state(self, obj: ReviewGrant) -> str:
        if obj.revoked_at is not None:
            return "revoked"
        return "live" if obj.expires_at > timezone.now() else "expired"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            return  # every field is read-only once granted
        grant = review_grant_create(
            reviewer=obj.reviewer,
            conversation=obj.conversation,
            purpose=obj.purpose,
            reference=obj.reference,
            expires_at=obj.expires_at,
            granted_by=request.user,
        )
        obj.pk = grant.pk
        obj.granted_at = grant.granted_at
        obj.granted_by = grant.granted_by

    @admin.action(description="Revoke the selected grants now", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ReviewGrant]) -> None:
        revoked = 0
        for grant_id in queryset.filter(revoked_at__isnull=True).values_list("pk", flat=True):
            review_grant_revoke(
                grant_id=grant_id, actor=request.user, reason="revoked in the admin"
            )
            revoked += 1
        self.message_user(request, f"{revoked} grant{'s' if revoked != 1 else ''} revoked.")


@admin.register(ReviewAlert)
class ReviewAlertAdmin(ReadOnlyAdmin):
    """Users who reviewed unusually many conversations in a day (REVIEW_ALERT_THRESHOLD). The
    reviews themselves are in the audit log (code review.read, filtered by the user)."""

    list_display = ("day", "reviewer", "conversations", "threshold", "raised_at", "last_review_at")
    list_filter = ("day",)
    search_fields = ("reviewer__username",)
