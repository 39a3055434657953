"""The signals' tables: hourly rollups, alert rules and their alerts, the price table, probes.

Tables of the signals room (``conversations/monitoring/``), registered with the ``conversations``
app like every module of this package (their migrations are in ``conversations/migrations``).
Nothing here holds a conversation id or any text of a conversation: a rollup is counts, an alert
names its rule and scope, and the conversations behind a firing are looked up at read time, under
the reader's queues (``monitoring/selectors/audited.py``), so an erasure never has to touch these
tables beyond the rollup counts.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import JSONField, Value

from ..monitoring.buckets import SIZE
from ..monitoring.destinations import (
    validate_no_line_break,
    validate_recipients,
    validate_webhook_url,
)
from ..monitoring.facts import FINISHES
from ..monitoring.metrics import choices as metric_choices


def _hist() -> list[int]:
    return [0] * SIZE


def _finishes() -> list[int]:
    return [0] * len(FINISHES)


class Rollup(models.Model):
    """One hour x queue x requested model x served snapshot (x shard: concurrent ingests of one
    key add to different rows instead of queueing on one row lock; readers sum the shards)."""

    hour = models.DateTimeField()
    queue = models.CharField(max_length=100, blank=True)
    requested_model = models.CharField(max_length=200, blank=True)
    served_model = models.CharField(max_length=200, blank=True)
    shard = models.PositiveSmallIntegerField(default=0)
    exchanges = models.BigIntegerField(default=0)
    conversations = models.BigIntegerField(default=0, help_text="exchanges that opened one")
    finishes = ArrayField(models.BigIntegerField(), default=_finishes, help_text=str(FINISHES))
    truncated = models.BigIntegerField(default=0)
    truncated_reasoning_tokens = models.BigIntegerField(default=0)
    truncated_output_tokens = models.BigIntegerField(default=0)
    refusals = models.BigIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    with_reasoning = models.BigIntegerField(default=0, help_text="exchanges that reasoned")
    output_hist = ArrayField(models.BigIntegerField(), default=_hist)
    reasoning_hist = ArrayField(models.BigIntegerField(), default=_hist)
    latency_hist = ArrayField(models.BigIntegerField(), default=_hist)
    tool_calls = models.BigIntegerField(default=0)
    tool_calls_hist = ArrayField(models.BigIntegerField(), default=_hist)
    repeated_tool_calls = models.BigIntegerField(default=0)
    looping = models.BigIntegerField(default=0, help_text="exchanges repeating a tool call")
    tool_results = models.BigIntegerField(default=0)
    tool_errors = models.BigIntegerField(default=0)
    rewritten = models.BigIntegerField(
        default=0, help_text="exchanges whose history changed in what the model sees"
    )
    rewrite_tool_loop_reasoning = models.BigIntegerField(default=0)
    rewrite_edited = models.BigIntegerField(default=0)
    rewrite_reordered = models.BigIntegerField(default=0)
    rewrite_reserialised = models.BigIntegerField(default=0)
    rewrite_settings = models.BigIntegerField(default=0)
    rewrite_unseen = models.BigIntegerField(
        default=0, help_text="exchanges whose history changed only in what the model never sees"
    )
    cache_lost_tokens = models.BigIntegerField(
        default=0, help_text="cache reads lost to rewrites the model sees (rewrites.py)"
    )
    thinking_dropped = models.BigIntegerField(
        default=0, help_text="thinking blocks the provider dropped (input_transformations)"
    )
    thinking_mismatch_allowed = models.BigIntegerField(
        default=0, help_text="thinking blocks shown despite a failed check (input_transformations)"
    )
    reasoning_estimated = models.BigIntegerField(
        default=0, help_text="exchanges whose reasoning tokens were estimated (profile usage)"
    )
    # DDSketch bins (``sketches.py``): the quantiles, within ``sketches.ALPHA`` of exact.
    output_sketch = models.JSONField(default=dict, db_default=Value({}, JSONField()))
    latency_sketch = models.JSONField(default=dict, db_default=Value({}, JSONField()))
    tool_calls_sketch = models.JSONField(default=dict, db_default=Value({}, JSONField()))

    class Meta:
        app_label = "conversations"
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "queue", "requested_model", "served_model", "shard"],
                name="signal_rollup_key",
            )
        ]
        indexes = [
            models.Index(fields=["served_model", "queue", "hour"], name="signal_rollup_model_idx"),
            models.Index(fields=["hour"], name="signal_rollup_hour_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h {self.queue or '-'} {self.served_model}"


NOT_NEGATIVE = MinValueValidator(0, message="a price is not negative")


class ModelPrice(models.Model):
    """What a model costs, per million tokens of each kind (reasoning is billed as output)."""

    model = models.CharField(max_length=200, unique=True, help_text="a snapshot, or an alias")
    # No price is negative: a form says which, and the table refuses one written around it.
    input = models.DecimalField(
        max_digits=12, decimal_places=4, help_text="per million tokens", validators=[NOT_NEGATIVE]
    )
    cache_read = models.DecimalField(max_digits=12, decimal_places=4, validators=[NOT_NEGATIVE])
    cache_write = models.DecimalField(max_digits=12, decimal_places=4, validators=[NOT_NEGATIVE])
    output = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        help_text="reasoning tokens are billed at this price",
        validators=[NOT_NEGATIVE],
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "conversations"
        ordering = ["model"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(
                    input__gte=0, cache_read__gte=0, cache_write__gte=0, output__gte=0
                ),
                name="model_price_not_negative",
            )
        ]

    def __str__(self) -> str:
        return f"price of {self.model}"


class AlertRule(models.Model):
    name = models.CharField(max_length=100, unique=True, validators=[validate_no_line_break])
    # The registry's metrics (``metrics.py``: one entry per metric).
    metric = models.CharField(max_length=30, choices=metric_choices)
    queue = models.CharField(max_length=100, blank=True, help_text="blank: each queue")
    snapshot = models.CharField(max_length=200, blank=True, help_text="blank: each snapshot")
    window_minutes = models.PositiveIntegerField(default=60)
    threshold = models.FloatField(help_text="shares as fractions (0.05 = 5 %)")
    min_exchanges = models.PositiveIntegerField(default=20, help_text="minimum volume")
    enabled = models.BooleanField(default=True)
    muted = models.BooleanField(default=False, help_text="evaluated, but nobody is notified")
    webhook_url = models.URLField(
        blank=True,
        validators=[validate_webhook_url],
        help_text="http(s); internal addresses are refused unless NOTIFY_ALLOWED_HOSTS names them",
    )
    webhook_secret = models.CharField(
        max_length=200, blank=True, help_text="HMAC key (blank: SIGNALS_WEBHOOK_SECRET)"
    )
    emails = models.CharField(
        max_length=500, blank=True, validators=[validate_recipients], help_text="comma-separated"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "conversations"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Alert(models.Model):
    """A rule's state for one queue and snapshot."""

    class State(models.TextChoices):
        FIRING = "firing"
        RESOLVED = "resolved"
        MUTED = "muted"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    queue = models.CharField(max_length=100, blank=True)
    snapshot = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=10, choices=State.choices)
    value = models.FloatField()
    volume = models.BigIntegerField()
    detail = models.CharField(max_length=300, blank=True, default="", help_text="in words")
    since = models.DateTimeField(help_text="when it entered this state")
    window_start = models.DateTimeField()
    evaluated_at = models.DateTimeField()

    class Meta:
        app_label = "conversations"
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "queue", "snapshot"], name="signal_alert_scope_uniq"
            )
        ]

    def __str__(self) -> str:
        return f"{self.rule} · {self.queue or '-'} · {self.snapshot or '-'}: {self.state}"


class AlertEvent(models.Model):
    """The history of an alert: each change of state, with what was measured."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="events")
    state = models.CharField(max_length=10, choices=Alert.State.choices)
    value = models.FloatField()
    volume = models.BigIntegerField()
    window_start = models.DateTimeField()
    at = models.DateTimeField()

    class Meta:
        app_label = "conversations"
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.alert_id} {self.state} at {self.at:%Y-%m-%d %H:%M}"


class Notification(models.Model):
    """One message to send (webhook or e-mail), kept until delivered: a crashed or failed send is
    retried by the next tick, up to ``ATTEMPTS`` times. About one thing: an alert's change of
    state (``event``) or a reviewer's request for review access (``review_request``, told to
    those who decide it: ``reviews/notify.py``); the same outbox and delivery serve both."""

    ATTEMPTS = 5

    class Channel(models.TextChoices):
        WEBHOOK = "webhook"
        EMAIL = "email"

    event = models.ForeignKey(
        AlertEvent, on_delete=models.CASCADE, related_name="notifications", null=True, blank=True
    )
    # Goes with its request, which goes with its conversation (retention's registry).
    review_request = models.ForeignKey(
        "conversations.ReviewAccessRequest",
        on_delete=models.CASCADE,
        related_name="notifications",
        null=True,
        blank=True,
    )
    channel = models.CharField(max_length=10, choices=Channel.choices)
    target = models.CharField(max_length=500)
    attempts = models.PositiveSmallIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    next_attempt_at = models.DateTimeField()

    class Meta:
        app_label = "conversations"
        indexes = [
            models.Index(fields=["delivered_at", "next_attempt_at"], name="signal_notify_due")
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(event__isnull=False, review_request__isnull=True)
                | models.Q(event__isnull=True, review_request__isnull=False),
                name="signal_notify_about_one",
            )
        ]

    def __str__(self) -> str:
        return f"{self.channel} to {self.target}"


class AllowanceProbe(models.Model):
    """How the provider answered one of the two mis-sized requests, per served snapshot."""

    class Kind(models.TextChoices):
        AT_BUDGET = "at_budget", "max_tokens at or below the thinking budget"
        NO_ROOM = "no_room", "max_tokens leaving the answer no room"

    format = models.CharField(max_length=40)
    model = models.CharField(max_length=200, help_text="the model asked for")
    snapshot = models.CharField(max_length=200, blank=True, help_text="the snapshot that answered")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    max_tokens = models.PositiveIntegerField()
    budget_tokens = models.PositiveIntegerField(null=True)
    outcome = models.CharField(max_length=20, help_text="refused, truncated or answered")
    http_status = models.PositiveSmallIntegerField()
    error = models.CharField(max_length=300, blank=True)
    stop_reason = models.CharField(max_length=60, blank=True)
    output_tokens = models.PositiveIntegerField(null=True)
    reasoning_tokens = models.PositiveIntegerField(null=True)
    probed_at = models.DateTimeField()

    class Meta:
        app_label = "conversations"
        ordering = ["-probed_at"]

    def __str__(self) -> str:
        return f"{self.model} {self.kind}: {self.outcome}"
