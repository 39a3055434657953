"""The signals' admin: alert rules and prices (audited writes), alerts and probes (read-only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from ..models import (
    Alert,
    AlertEvent,
    AlertRule,
    AllowanceProbe,
    ModelPrice,
    Notification,
)
from ..monitoring.alerts import model_price_delete, model_price_save, rule_delete, rule_save
from .base import AuditedAdmin, ReadOnlyAdmin


def _known_queues() -> list[str]:
    from ..models import Queue

    return list(Queue.objects.order_by("name").values_list("name", flat=True))


def _known_snapshots() -> list[str]:
    """The served snapshots the signals have counted (the rollups' index leads with them)."""
    from ..models import Rollup

    return list(
        Rollup.objects.exclude(served_model="")
        .order_by("served_model")
        .values_list("served_model", flat=True)
        .distinct()
    )


def _scope_choices(blank: str, known: list[str], current: str) -> list[tuple[str, str]]:
    """A rule's queue or snapshot: blank (each), one that exists, or the rule's own value when
    it matches nothing yet (kept, and said plainly, so saving the form does not change it)."""
    choices = [("", blank), *((name, name) for name in known)]
    if current and current not in known:
        choices.append((current, f"{current} (matches nothing yet)"))
    return choices


class AlertRuleForm(forms.ModelForm):
    """The queue and the snapshot are chosen from those that exist: a rule for "biling" would
    save and never fire."""

    queue = forms.ChoiceField(required=False, help_text="the queues conversations name")
    snapshot = forms.ChoiceField(
        required=False, help_text="the snapshots the signals have counted so far"
    )
    # The URL as typed (the model's validators say why one is refused: destinations.py).
    webhook_url = forms.CharField(
        required=False,
        max_length=200,
        help_text="http(s); internal addresses are refused unless NOTIFY_ALLOWED_HOSTS names them",
    )

    class Meta:
        model = AlertRule
        fields = (
            "name", "metric", "queue", "snapshot", "window_minutes", "threshold",
            "min_exchanges", "enabled", "muted", "webhook_url", "webhook_secret", "emails",
        )  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        rule = self.instance
        queues, snapshots = _known_queues(), _known_snapshots()
        queue, snapshot = self.fields["queue"], self.fields["snapshot"]
        assert isinstance(queue, forms.ChoiceField) and isinstance(snapshot, forms.ChoiceField)
        queue.choices = _scope_choices("each queue", queues, rule.queue)
        snapshot.choices = _scope_choices("each snapshot", snapshots, rule.snapshot)
        if not queues:
            queue.help_text = "no queue exists yet: the rule watches each queue"
        if not snapshots:
            snapshot.help_text = "no snapshot counted yet: the rule watches each snapshot"


@admin.register(AlertRule)
class AlertRuleAdmin(AuditedAdmin):
    """What is watched (metric), where (queue, snapshot: blank for each), over which window,
    above which threshold, from which volume; who is told (webhook, e-mail). Muted rules are
    evaluated but notify nobody. ``monitoring_tick`` evaluates them on its own beat entry."""

    form = AlertRuleForm
    list_display = (
        "name",
        "metric",
        "queue",
        "snapshot",
        "scope_matches",
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

    def get_queryset(self, request: HttpRequest) -> Any:
        from django.db.models import Exists, OuterRef

        from ..models import Queue, Rollup

        return (
            super()
            .get_queryset(request)
            .annotate(
                queue_exists=Exists(Queue.objects.filter(name=OuterRef("queue"))),
                snapshot_exists=Exists(Rollup.objects.filter(served_model=OuterRef("snapshot"))),
            )
        )

    @admin.display(description="Scope")
    def scope_matches(self, obj: Any) -> str:
        missing = [
            f"{what} {name!r}"
            for what, name, exists in (
                ("queue", obj.queue, getattr(obj, "queue_exists", True)),
                ("snapshot", obj.snapshot, getattr(obj, "snapshot_exists", True)),
            )
            if name and not exists
        ]
        return f"{' and '.join(missing)} matches nothing yet" if missing else "exists"

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


# Prices are in US dollars: the pages show them with "$" (the model page, the readiness report,
# the conversation's timing and cost panel).
CURRENCY = "USD"


class ModelPriceForm(forms.ModelForm):
    class Meta:
        model = ModelPrice
        fields = ("model", "input", "cache_read", "cache_write", "output")
        labels = {
            "input": f"Input ({CURRENCY} per million tokens)",
            "cache_read": f"Cache read ({CURRENCY} per million tokens)",
            "cache_write": f"Cache write ({CURRENCY} per million tokens)",
            "output": f"Output, reasoning included ({CURRENCY} per million tokens)",
        }
        help_texts = {
            name: f"in {CURRENCY} ($) per million tokens"
            for name in ("input", "cache_read", "cache_write", "output")
        }


@admin.register(ModelPrice)
class ModelPriceAdmin(AuditedAdmin):
    """Price per million tokens, per model and token kind; reasoning is billed as output. The
    model page and the readiness report price exchanges from this table."""

    form = ModelPriceForm
    list_display = ("model", "input_usd", "cache_read_usd", "cache_write_usd", "output_usd",
                    "updated_at")  # fmt: skip

    @admin.display(description=f"input ({CURRENCY} / M tokens)", ordering="input")
    def input_usd(self, obj: ModelPrice) -> str:
        return f"${obj.input}"

    @admin.display(description=f"cache read ({CURRENCY} / M tokens)", ordering="cache_read")
    def cache_read_usd(self, obj: ModelPrice) -> str:
        return f"${obj.cache_read}"

    @admin.display(description=f"cache write ({CURRENCY} / M tokens)", ordering="cache_write")
    def cache_write_usd(self, obj: ModelPrice) -> str:
        return f"${obj.cache_write}"

    @admin.display(description=f"output ({CURRENCY} / M tokens)", ordering="output")
    def output_usd(self, obj: ModelPrice) -> str:
        return f"${obj.output}"

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
    """Each notification's delivery (an alert's change of state, or a review request told to its
    deciders): attempts, the last error (a refused destination, a timeout, a status, an address
    the mail server refused), when it was delivered. One failing never holds back another
    (monitoring/delivery.py)."""

    list_display = (
        "event", "review_request", "channel", "target", "attempts", "delivered_at", "last_error",
    )  # fmt: skip
    list_filter = ("channel",)
    list_select_related = ("event", "review_request")
