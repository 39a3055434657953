"""The audit log in the admin: read-only, and every look at it is itself logged (audit.viewed).

Nobody may add, change or delete a row here (the database refuses UPDATE and DELETE anyway).
Seeing the log takes the ``audit.view_auditevent`` permission (the compliance role).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import admin
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from . import record
from .hashing import query_hash
from .models import AuditEvent, AuditSeal
from .registry import EVENT_TYPES

# The changelist's own filters (list_filter below) are kept when their values are what the
# filters offer: a known code, a date. Anything else typed into the URL or the search box may be
# a customer id, so it is kept only as a keyed hash.
_DATE_RE = re.compile(r"^[0-9 :.+\-T]{0,40}$")


def _filters(request: HttpRequest) -> dict[str, str]:
    kept = {}
    for key in sorted(request.GET):
        field = key.split("__", 1)[0]
        value = request.GET.get(key, "")
        if field == "code":
            kept[key] = value if value in EVENT_TYPES else f"hash:{query_hash(value)}"
        elif field == "at":
            kept[key] = value if _DATE_RE.match(value) else f"hash:{query_hash(value)}"
    return kept


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("id", "at", "code", "actor_label", "conversation_id", "subject_hash")
    list_filter = ("code", "at")
    search_fields = ("=conversation_id",)
    search_help_text = "conversation id (internal)"
    ordering = ("-id",)
    list_per_page = 100
    show_full_result_count = False  # no count(*) of the whole log on every page
    actions = None
    fields = (
        "id",
        "at",
        "code",
        "actor_id",
        "actor_label",
        "conversation_id",
        "subject_hash",
        "details",
        "xid",
        "seal",
    )
    readonly_fields = fields

    @admin.display(description="seal")
    def seal(self, obj: AuditEvent) -> str:
        seal = AuditSeal.objects.filter(event_id=obj.pk).first()
        if seal is None:
            return "not sealed yet (the sealer chains committed rows every few seconds)"
        return f"position {seal.position}, digest {seal.digest_id}, hash {seal.hash}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        with transaction.atomic():
            response = super().changelist_view(request, extra_context)
            if request.method == "GET" and response.status_code == 200:
                search = request.GET.get("q", "")
                details: dict[str, Any] = {"page": "admin-list", "filters": _filters(request)}
                if search:
                    details["query_hash"] = query_hash(search)
                record("audit.viewed", actor=request.user, **details)
            # Rendered here, so that the rows are read in the transaction that logs the read.
            if isinstance(response, TemplateResponse):
                response.render()
        return response

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        with transaction.atomic():
            response = super().change_view(request, object_id, form_url, extra_context)
            if request.method == "GET" and response.status_code == 200:
                record(
                    "audit.viewed",
                    actor=request.user,
                    page="admin-detail",
                    filters={"id": object_id[:20]},
                )
            if isinstance(response, TemplateResponse):
                response.render()
        return response
