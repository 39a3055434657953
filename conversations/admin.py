"""Admin for the conversation store.

The admin is a human surface like any page: it shows projections (Block rows), never
``Message.raw_ciphertext``, which holds the deliberation, encrypted, for replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from .models import (
    Conversation,
    Exchange,
    FieldPolicy,
    Queue,
    QueueGroupObjectPermission,
    QueueUserObjectPermission,
    ReprojectionJob,
    ServiceToken,
    ToolLink,
    UnknownBlockType,
)
from .projection import PATH_RE, Rule
from .reads import exchange_preview_read
from .selectors import exchanges_for_preview
from .services import (
    field_policy_delete,
    field_policy_save,
    queue_create,
    queue_grant,
    service_token_revoke,
    service_token_update,
    tool_link_delete,
    tool_link_save,
)


class AuditedAdmin(admin.ModelAdmin):
    """A model whose every change goes through an audited service: ``save_model`` and
    ``delete_model`` call it. Bulk deletion from the changelist would bypass them, so it goes
    through ``delete_model`` one row at a time. (The admin's own history, LogEntry, is kept as
    Django keeps it; the audit log is the record.)"""

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


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


@admin.register(ServiceToken)
class ServiceTokenAdmin(AuditedAdmin):
    """Rename a token or change its scope (``service_token_update``); revoke with the list's
    action (``service_token_revoke``). Tokens are created by ``manage.py create_service_token``,
    which prints the token once; they are revoked, never deleted (the log names them by id)."""

    list_display = ("name", "scope", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "token_sha256", "created_at", "last_used_at", "revoked_at")
    fields = ("name", "scope", "prefix", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # tokens are created by `manage.py create_service_token`, which prints it once

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        service_token_update(token=obj, name=obj.name, scope=obj.scope, actor=request.user)

    @admin.action(description="Revoke the selected tokens now", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ServiceToken]) -> None:
        tokens = list(queryset.filter(revoked_at__isnull=True))
        for token in tokens:
            service_token_revoke(token=token, actor=request.user)
        self.message_user(request, f"{len(tokens)} token{'s' if len(tokens) != 1 else ''} revoked.")


@admin.register(FieldPolicy)
class FieldPolicyAdmin(AuditedAdmin):
    """Storage classes per field. Saving or deleting re-projects every stored conversation in the
    background (see Re-projection jobs); "Preview" shows an exchange under a draft first."""

    list_display = ("tool_name", "block_type", "side", "path", "storage_class", "updated_at")
    list_filter = ("storage_class", "side", "tool_name")
    search_fields = ("tool_name", "path")
    change_list_template = "admin/conversations/fieldpolicy/change_list.html"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        job = field_policy_save(policy=obj, actor=request.user)
        self.message_user(request, f"Re-projection job {job.pk} queued: old conversations follow.")

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        field_policy_delete(policy=obj, actor=request.user)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "preview/",
                self.admin_site.admin_view(self.preview_view),
                name="conversations_fieldpolicy_preview",
            ),
            *super().get_urls(),
        ]

    def preview_view(self, request: HttpRequest) -> HttpResponse:
        """A draft policy over one exchange, picked from the latest ones with tool calls (or
        named by id), now and with the draft side by side, the fields that change marked. The
        read is audited like any read of a conversation (``exchange_preview_read``)."""
        form = PolicyPreviewForm(request.GET or None, recent=exchanges_for_preview())
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "title": "Preview a draft policy",
            "form": form,
            "opts": self.model._meta,
        }
        if form.is_valid():
            draft = Rule(
                form.cleaned_data["tool_name"] or "*",
                form.cleaned_data["block_type"] or "*",
                form.cleaned_data["side"],
                form.cleaned_data["path"],
                form.cleaned_data["storage_class"],
            )
            result = exchange_preview_read(
                user=request.user, exchange_id=form.cleaned_data["exchange"], draft=draft
            )
            if result is None:
                form.add_error("exchange", "no such exchange")
            else:
                context["preview"] = result.messages
                context["exchange"] = result.exchange
                context["changes"] = sum(len(b.changed) for m in result.messages for b in m.blocks)
        return TemplateResponse(request, "admin/conversations/fieldpolicy/preview.html", context)


class PolicyPreviewForm(forms.Form):
    pick = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="Exchange",
        help_text="the latest exchanges with tool calls: backend id · customer · tools",
    )
    exchange = forms.IntegerField(
        required=False, min_value=1, label="or its id", help_text="any stored exchange"
    )
    tool_name = forms.CharField(required=False, max_length=200, help_text="empty: any tool")
    block_type = forms.CharField(required=False, max_length=100, help_text="empty: any type")
    side = forms.ChoiceField(choices=FieldPolicy.Side.choices)
    path = forms.RegexField(regex=PATH_RE, max_length=300, initial="$.")
    storage_class = forms.ChoiceField(choices=FieldPolicy.StorageClass.choices)

    field_order = ["pick", "exchange", "tool_name", "block_type", "side", "path", "storage_class"]

    def __init__(self, *args: Any, recent: Sequence[Exchange] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pick = self.fields["pick"]
        assert isinstance(pick, forms.TypedChoiceField)
        pick.choices = [
            ("", "—"),
            *[
                (
                    e.pk,
                    f"{e.conversation.external_id} · {e.conversation.customer_external_id} · "
                    f"call {e.ordinal} · {', '.join(getattr(e, 'tools', None) or []) or 'tools'}"
                    f" · {e.created_at:%Y-%m-%d %H:%M}",
                )
                for e in recent
            ],
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("exchange"):
            data["exchange"] = data.get("pick")
        if not data.get("exchange") and "exchange" not in self.errors:
            self.add_error("exchange", "pick an exchange, or give its id")
        return data


@admin.register(ToolLink)
class ToolLinkAdmin(AuditedAdmin):
    list_display = ("tool_name", "url_template")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        tool_link_save(link=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        tool_link_delete(link=obj, actor=request.user)


@admin.register(ReprojectionJob)
class ReprojectionJobAdmin(ReadOnlyAdmin):
    list_display = ("id", "reason", "status", "progress", "created_at", "finished_at")
    list_filter = ("status",)

    @admin.display(description="progress")
    def progress(self, obj: ReprojectionJob) -> str:
        return f"{obj.done} / {obj.total} ({obj.percent}%)"


class QueueAccessForm(forms.ModelForm):
    """Who sees the queue's conversations: its users and groups (guardian object permissions)."""

    users = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=FilteredSelectMultiple("users", is_stacked=False),
    )
    groups = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=FilteredSelectMultiple("groups", is_stacked=False),
    )

    class Meta:
        model = Queue
        fields = ["name"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["users"].initial = list(
                QueueUserObjectPermission.objects.filter(content_object=self.instance).values_list(
                    "user_id", flat=True
                )
            )
            self.fields["groups"].initial = list(
                QueueGroupObjectPermission.objects.filter(content_object=self.instance).values_list(
                    "group_id", flat=True
                )
            )


@admin.register(Queue)
class QueueAdmin(AuditedAdmin):
    """Create queues and grant and revoke them here: ``queue_create`` and ``queue_grant``, each
    audited. A queue's name is fixed once created (its conversations name it), and a queue is
    never deleted."""

    form = QueueAccessForm
    list_display = ("name", "created_at")
    search_fields = ("name",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("name",) if obj is not None else ()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            created = queue_create(name=obj.name, actor=request.user)
            obj.pk, obj.created_at = created.pk, created.created_at

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """The users and groups who see the queue: one audited grant or revocation each."""
        queue = form.instance
        for field, model, principals in (
            ("users", QueueUserObjectPermission, get_user_model()),
            ("groups", QueueGroupObjectPermission, Group),
        ):
            key = "user" if field == "users" else "group"
            before = set(
                model.objects.filter(content_object=queue).values_list(f"{key}_id", flat=True)
            )
            after = {p.pk: p for p in form.cleaned_data[field]}
            for pk in sorted(after.keys() - before):
                queue_grant(principal=after[pk], queue_name=queue.name, actor=request.user)
            removed = before - after.keys()
            for principal in principals.objects.filter(pk__in=removed).order_by("pk"):
                queue_grant(
                    principal=principal, queue_name=queue.name, revoke=True, actor=request.user
                )


# --- Reasoning review grants and alerts (reviews.py) --------------------------------------------

from django.core.exceptions import ValidationError  # noqa: E402
from django.utils import timezone  # noqa: E402

from .models import ReviewAlert, ReviewGrant  # noqa: E402
from .reviews import (  # noqa: E402
    GrantRefused,
    review_grant_check,
    review_grant_create,
    review_grant_revoke,
)


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
