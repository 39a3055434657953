"""The two kinds of admin this project has: audited (every write through a service) and
read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


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
