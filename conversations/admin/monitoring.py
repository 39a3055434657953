"""The signals' admin: alert rules and prices (audited writes), alerts and probes (read-only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from ..monitoring.alerts import model_price_delete, model_price_save, rule_delete, rule_save
from ..monitoring.models import (
    Alert,
    AlertEvent,
    AlertRule,
    AllowanceProbe,
    ModelPrice,
    Notification,
)
from .base import AuditedAdmin, ReadOnlyAdmin


@admin.register(AlertRule)
class AlertRuleAdmin(AuditedAdmin):
    """What is watched (metric), where (queue, snapshot: blank for each), over which window,
    above which threshold, from which volume; who is told (webhook, e-mail). Muted rules are
    evaluated but notify nobody. ``monitoring_tick`` evaluates them on its own beat entry."""

    list_display = (
        "name",
        "metric",
        "queue",
        "snapshot",
        "window_minutes",
        "threshold",
        "min_exchanges",
        "enabled",
        "muted",
    )
    list_filter = ("metric", "enabled", "muted")
    # The URL as typed: a bare "host:port" is refused, never completed to https://host:port (the
    # model's validators say why: destinations.py).
    formfield_overrides = {models.URLField: {"form_class": forms.CharField}}
    actions = ["disable_rules", "enable_rules"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        rule_save(rule=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        rule_delete(rule=obj, actor=request.user)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """A rule takes its alerts, their history and notifications with it. The alerts' admin
        is read-only (nobody deletes one alone), which Django's confirmation page would read as
        a missing permission and answer 403, even to a superuser: whoever may delete the rule
        may delete what belongs to it."""
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def _set_enabled(self, request: HttpRequest, queryset: Any, enabled: bool) -> None:
        for rule in queryset:
            rule.enabled = enabled
            rule_save(rule=rule, actor=request.user)
        verb = "enabled" if enabled else "disabled"
        self.message_user(request, f"{queryset.count()} rule(s) {verb}")

    @admin.action(description="Disable the selected rules", permissions=["change"])
    def disable_rules(self, request: HttpRequest, queryset: Any) -> None:
        self._set_enabled(request, queryset, False)

    @admin.action(description="Enable the selected rules", permissions=["change"])
    def enable_rules(self, request: HttpRequest, queryset: Any) -> None:
        self._set_enabled(request, queryset, True)


@admin.register(ModelPrice)
class ModelPriceAdmin(AuditedAdmin):
    """Price per million tokens, per model and token kind; reasoning is billed as output. The
    model page and the readiness report price exchanges from this table."""

    list_display = ("model", "input", "cache_read", "cache_write", "output", "updated_at")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        model_price_save(price=obj, actor=request.user)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        model_price_delete(price=obj, actor=request.user)


class AlertEventInline(admin.TabularInline):
    model = AlertEvent
    extra = 0
    can_delete = False
    readonly_fields = ("state", "value", "volume", "window_start", "at")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Alert)
class AlertAdmin(ReadOnlyAdmin):
    """Each rule's state per queue and snapshot, with its history (the page for people:
    /signals/alerts/)."""

    list_display = ("rule", "queue", "snapshot", "state", "value", "volume", "since")
    list_filter = ("state", "rule")
    inlines = [AlertEventInline]


@admin.register(AllowanceProbe)
class AllowanceProbeAdmin(ReadOnlyAdmin):
    """How providers answered ``manage.py probe_allowance``'s two mis-sized requests."""

    list_display = ("model", "snapshot", "kind", "outcome", "http_status", "probed_at")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """Each notification's delivery: attempts, the last error (a refused destination, a timeout,
    a status, an address the mail server refused), when it was delivered. One failing never
    holds back another (signals/delivery.py)."""

    list_display = ("event", "channel", "target", "attempts", "delivered_at", "last_error")
    list_filter = ("channel",)
    list_select_related = ("event",)
