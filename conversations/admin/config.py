"""What admins configure: service tokens, field policies (with their preview), tool links and
queues with who sees them. Every write goes through an audited service."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path

from ..models import (
    Exchange,
    FieldPolicy,
    Queue,
    QueueGroupObjectPermission,
    QueueUserObjectPermission,
    ServiceToken,
    ShareLink,
    ToolLink,
    WorkNote,
)
from ..projection.policies import field_policies
from ..projection.project import PATH_RE, Rule
from ..selectors import exchanges_for_preview
from ..selectors.audited import exchange_preview_read
from ..services import (
    field_policies_save,
    field_policy_delete,
    field_policy_save,
    queue_create,
    queue_grant,
    service_token_revoke,
    service_token_update,
    tool_link_delete,
    tool_link_save,
)
from ..sharing.notes import TemplateRefused, check_template
from ..sharing.services import work_note_delete, work_note_save
from .base import AuditedAdmin, ReadOnlyAdmin
from .policy_form import SeveralFieldsForm


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
            path(
                "several/",
                self.admin_site.admin_view(self.several_view),
                name="conversations_fieldpolicy_several",
            ),
            *super().get_urls(),
        ]

    def several_view(self, request: HttpRequest) -> HttpResponse:
        """Several fields of one tool in one form, saved together (``admin/policy_form.py``)."""
        if not self.has_add_permission(request) or not self.has_change_permission(request):
            raise PermissionDenied
        form = SeveralFieldsForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            policies = form.cleaned_data["policies"]
            job = field_policies_save(policies=policies, actor=request.user)
            self.message_user(
                request,
                f"{len(policies)} field polic{'y' if len(policies) == 1 else 'ies'} saved; "
                f"re-projection job {job.pk} queued.",
            )
            return redirect("admin:conversations_fieldpolicy_changelist")
        context = {
            **self.admin_site.each_context(request),
            "title": "Field policies: several fields of one tool",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(
            request, "admin/conversations/fieldpolicy/several.html", context,
            status=400 if request.method == "POST" else 200,
        )  # fmt: skip

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


class WorkNoteForm(forms.ModelForm):
    """Refuses, on save, a template naming a field a note may not show (the field named)."""

    class Meta:
        model = WorkNote
        fields = ["tool_name", "template"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        tool, template = data.get("tool_name"), data.get("template")
        if tool and template:
            try:
                check_template(tool=tool, template=template, policies=field_policies(fresh=True))
            except TemplateRefused as exc:
                self.add_error("template", exc.detail)
        return data


@admin.register(WorkNote)
class WorkNoteAdmin(AuditedAdmin):
    """A progress line per tool, shown in the trail, the export, share pages and the live view
    ("Looked up order {order_id}: {status}"): only identifier, status and display fields."""

    form = WorkNoteForm
    list_display = ("tool_name", "template", "updated_at")
    search_fields = ("tool_name",)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        work_note_save(note=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        work_note_delete(note=obj, actor=request.user)


@admin.register(ShareLink)
class ShareLinkAdmin(ReadOnlyAdmin):
    """Share links, for the record (compliance lists them at /compliance/share-links/): no
    token is kept, only its hash. Revoked from the conversation page or that list."""

    list_display = ("pk", "conversation", "created_by", "created_at", "expires_at", "revoked_at")
    list_select_related = ("conversation", "created_by")
    exclude = ("token_sha256",)
