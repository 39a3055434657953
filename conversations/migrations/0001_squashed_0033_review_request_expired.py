"""The conversations app's tables as its 27 earlier migrations left them (squashed): the store
(conversations, exchanges, messages, blocks, data keys), queues and their object permissions,
review grants and requests, share links and work notes, the signals' rollups, rules, alerts and
notifications, prices, service tokens. It is long because it is the whole schema; Django wrote
its models' part, the rest is what no model says:

- a queue's name is fixed once it exists: conversations name their queue, and who sees a
  conversation is a permission on the Queue of that name, so a rename would hide its
  conversations from everyone granted it; the database refuses it, whoever asks (the admin shows
  the name read-only);
- the rollups' SQL functions: ``signal_add`` sums two histograms element-wise and ``signal_sum``
  over rows (the rollups' upsert, readers summing shards and hours), ``signal_sketch_add`` sums
  two DDSketches bin-wise, empty bins left out (conversations/monitoring/sketches.py);
- the two alert rules the product ships with, enabled: answers truncated by reasoning, agents
  looping on tools.

The earlier migrations' data steps (backfills of columns added to stored rows) had nothing to do
on a new database and are not here. A database migrated through the earlier migrations has this
one as applied.
"""

from typing import Any

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.core.validators
import django.db.models.deletion
import django.db.models.fields.json
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import conversations.models.monitoring
import conversations.monitoring.destinations
import conversations.monitoring.metrics

QUEUE_NAME_FIXED = """
CREATE FUNCTION conversations_queue_name_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.name IS DISTINCT FROM OLD.name THEN
        RAISE EXCEPTION 'queue % cannot be renamed: its conversations name it', OLD.name
            USING HINT = 'create a new queue instead; see conversations/migrations/0001';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER conversations_queue_name_fixed
    BEFORE UPDATE OF name ON conversations_queue
    FOR EACH ROW EXECUTE FUNCTION conversations_queue_name_fixed();
"""

QUEUE_NAME_FREE = """
DROP TRIGGER IF EXISTS conversations_queue_name_fixed ON conversations_queue;
DROP FUNCTION IF EXISTS conversations_queue_name_fixed();
"""

SIGNAL_ADD = """
CREATE FUNCTION signal_add(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i)
    FROM unnest(a, b) WITH ORDINALITY AS t(x, y, i)
$$
"""

SIGNAL_SKETCH_ADD = """
CREATE FUNCTION signal_sketch_add(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb) FROM (
        SELECT k, sum(v) AS n FROM (
            SELECT key AS k, value::bigint AS v
            FROM jsonb_each_text(coalesce(a, '{}'::jsonb))
            UNION ALL
            SELECT key, value::bigint FROM jsonb_each_text(coalesce(b, '{}'::jsonb))
        ) t GROUP BY k HAVING sum(v) <> 0
    ) s
$$
"""

RULES = [
    {
        "name": "Answers truncated (reasoning ate the allowance)",
        "metric": "truncation",
        "window_minutes": 60,
        "threshold": 0.05,  # more than 5 % of exchanges cut off at max_tokens
        "min_exchanges": 20,
    },
    {
        "name": "Agents looping on tools",
        "metric": "repeated_tool_calls",
        "window_minutes": 60,
        "threshold": 0.05,  # more than 5 % of turns repeat a call with the same arguments
        "min_exchanges": 20,
    },
]


def add_rules(apps: Any, schema_editor: Any) -> None:
    AlertRule = apps.get_model("conversations", "AlertRule")
    for rule in RULES:
        AlertRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove_rules(apps: Any, schema_editor: Any) -> None:
    AlertRule = apps.get_model("conversations", "AlertRule")
    AlertRule.objects.filter(name__in=[r["name"] for r in RULES]).delete()


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("conversations", "0001_initial"),
        ("conversations", "0002_queues_and_search"),
        ("conversations", "0003_conversation_flags"),
        ("conversations", "0004_review_grants"),
        ("conversations", "0005_service_token_scope"),
        ("conversations", "0006_queue_name_fixed"),
        ("conversations", "0007_exchange_unknown_chunks"),
        ("conversations", "0008_console_indexes"),
        ("conversations", "0009_workspace_status_and_find"),
        ("conversations", "0010_exchange_cancelled"),
        ("conversations", "0011_sharing_and_work_notes"),
        ("conversations", "0012_exchange_live_timings"),
        ("conversations", "0013_signals"),
        ("conversations", "0014_signals_default_rules"),
        ("conversations", "0015_review_permission_declared"),
        ("conversations", "0018_service_token_metrics_scope"),
        ("conversations", "0019_servicetoken_scope_scim"),
        ("conversations", "0021_alert_destinations"),
        ("conversations", "0025_workspace_second_pass"),
        ("conversations", "0026_rollup_sketches"),
        ("conversations", "0027_backend_conformance"),
        ("conversations", "0028_exchange_paths"),
        ("conversations", "0029_review_request_notifications"),
        ("conversations", "0030_last_activity_is_the_latest_message"),
        ("conversations", "0031_conversation_sorts"),
        ("conversations", "0032_model_price_not_negative"),
        ("conversations", "0033_review_request_expired"),
    ]

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Alert",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("queue", models.CharField(blank=True, max_length=100)),
                ("snapshot", models.CharField(blank=True, max_length=200)),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("firing", "Firing"),
                            ("resolved", "Resolved"),
                            ("muted", "Muted"),
                        ],
                        max_length=10,
                    ),
                ),
                ("value", models.FloatField()),
                ("volume", models.BigIntegerField()),
                (
                    "detail",
                    models.CharField(blank=True, default="", help_text="in words", max_length=300),
                ),
                ("since", models.DateTimeField(help_text="when it entered this state")),
                ("window_start", models.DateTimeField()),
                ("evaluated_at", models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name="AlertRule",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "name",
                    models.CharField(
                        max_length=100,
                        unique=True,
                        validators=[conversations.monitoring.destinations.validate_no_line_break],
                    ),
                ),
                (
                    "metric",
                    models.CharField(
                        choices=conversations.monitoring.metrics.choices, max_length=30
                    ),
                ),
                (
                    "queue",
                    models.CharField(blank=True, help_text="blank: each queue", max_length=100),
                ),
                (
                    "snapshot",
                    models.CharField(blank=True, help_text="blank: each snapshot", max_length=200),
                ),
                ("window_minutes", models.PositiveIntegerField(default=60)),
                ("threshold", models.FloatField(help_text="shares as fractions (0.05 = 5 %)")),
                (
                    "min_exchanges",
                    models.PositiveIntegerField(default=20, help_text="minimum volume"),
                ),
                ("enabled", models.BooleanField(default=True)),
                (
                    "muted",
                    models.BooleanField(
                        default=False, help_text="evaluated, but nobody is notified"
                    ),
                ),
                (
                    "webhook_url",
                    models.URLField(
                        blank=True,
                        help_text="http(s); internal addresses are refused unless NOTIFY_ALLOWED_HOSTS names them",
                        validators=[conversations.monitoring.destinations.validate_webhook_url],
                    ),
                ),
                (
                    "webhook_secret",
                    models.CharField(
                        blank=True,
                        help_text="HMAC key (blank: SIGNALS_WEBHOOK_SECRET)",
                        max_length=200,
                    ),
                ),
                (
                    "emails",
                    models.CharField(
                        blank=True,
                        help_text="comma-separated",
                        max_length=500,
                        validators=[conversations.monitoring.destinations.validate_recipients],
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="AllowanceProbe",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("format", models.CharField(max_length=40)),
                ("model", models.CharField(help_text="the model asked for", max_length=200)),
                (
                    "snapshot",
                    models.CharField(
                        blank=True, help_text="the snapshot that answered", max_length=200
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("at_budget", "max_tokens at or below the thinking budget"),
                            ("no_room", "max_tokens leaving the answer no room"),
                        ],
                        max_length=20,
                    ),
                ),
                ("max_tokens", models.PositiveIntegerField()),
                ("budget_tokens", models.PositiveIntegerField(null=True)),
                (
                    "outcome",
                    models.CharField(help_text="refused, truncated or answered", max_length=20),
                ),
                ("http_status", models.PositiveSmallIntegerField()),
                ("error", models.CharField(blank=True, max_length=300)),
                ("stop_reason", models.CharField(blank=True, max_length=60)),
                ("output_tokens", models.PositiveIntegerField(null=True)),
                ("reasoning_tokens", models.PositiveIntegerField(null=True)),
                ("probed_at", models.DateTimeField()),
            ],
            options={
                "ordering": ["-probed_at"],
            },
        ),
        migrations.CreateModel(
            name="DataKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("conversation_id", models.BigIntegerField(unique=True)),
                ("master_key_id", models.CharField(max_length=16)),
                ("wrapped_key", models.BinaryField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("rewrapped_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name="Queue",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
                "permissions": [("see_queue", "See the conversations of this queue")],
            },
        ),
        migrations.CreateModel(
            name="ReprojectionJob",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("running", "Running"),
                            ("completed", "Completed"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=20,
                    ),
                ),
                ("reason", models.CharField(max_length=300)),
                ("total", models.PositiveIntegerField(default=0)),
                ("done", models.PositiveIntegerField(default=0)),
                (
                    "last_conversation_id",
                    models.BigIntegerField(default=0, help_text="resume point"),
                ),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="ServiceToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100, unique=True)),
                (
                    "scope",
                    models.CharField(
                        choices=[
                            ("ingest", "chat backend: exchanges, replay, events"),
                            ("compliance", "ticketing system: deletion requests, legal holds"),
                            ("metrics", "monitoring: /metrics"),
                            ("scim", "identity provider: SCIM provisioning of people and groups"),
                        ],
                        default="ingest",
                        max_length=20,
                    ),
                ),
                (
                    "prefix",
                    models.CharField(
                        help_text="the first characters, to tell tokens apart", max_length=12
                    ),
                ),
                ("token_sha256", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name="ToolLink",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("tool_name", models.CharField(max_length=200, unique=True)),
                (
                    "url_template",
                    models.CharField(
                        help_text="one {placeholder} named as the identifier's key, e.g. https://orders.example.com/orders/{order_id}",
                        max_length=500,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="WorkNote",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("tool_name", models.CharField(max_length=200, unique=True)),
                (
                    "template",
                    models.CharField(
                        help_text="{placeholders} name a field's key (order_id, status); only identifier, status and display fields may be named",
                        max_length=300,
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["tool_name"],
            },
        ),
        migrations.CreateModel(
            name="AlertEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("firing", "Firing"),
                            ("resolved", "Resolved"),
                            ("muted", "Muted"),
                        ],
                        max_length=10,
                    ),
                ),
                ("value", models.FloatField()),
                ("volume", models.BigIntegerField()),
                ("window_start", models.DateTimeField()),
                ("at", models.DateTimeField()),
                (
                    "alert",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="conversations.alert",
                    ),
                ),
            ],
            options={
                "ordering": ["-at", "-id"],
            },
        ),
        migrations.AddField(
            model_name="alert",
            name="rule",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="alerts",
                to="conversations.alertrule",
            ),
        ),
        migrations.CreateModel(
            name="Conversation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("external_id", models.CharField(max_length=200, unique=True)),
                ("customer_external_id", models.CharField(db_index=True, max_length=200)),
                ("queue", models.CharField(blank=True, db_index=True, max_length=100)),
                ("labels", models.JSONField(blank=True, default=dict)),
                ("message_count", models.PositiveIntegerField(default=0)),
                ("exchange_count", models.PositiveIntegerField(default=0)),
                ("tool_call_count", models.PositiveIntegerField(db_default=0, default=0)),
                ("any_truncated", models.BooleanField(db_default=False, default=False)),
                ("any_refusal", models.BooleanField(db_default=False, default=False)),
                ("any_rewritten", models.BooleanField(db_default=False, default=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_activity_at", models.DateTimeField(db_index=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("open", "open"),
                            ("escalated", "escalated, awaiting a person"),
                            ("resolved", "resolved"),
                            ("abandoned", "abandoned"),
                        ],
                        db_default="open",
                        default="open",
                        max_length=20,
                    ),
                ),
                ("status_at", models.DateTimeField(blank=True, null=True)),
                ("output_tokens", models.BigIntegerField(db_default=0, default=0)),
                ("slowest_ms", models.PositiveIntegerField(db_default=0, default=0)),
            ],
            options={
                "permissions": [
                    ("view_restricted_fields", "See tool fields of the restricted storage class"),
                    ("review_reasoning", "Read the reasoning of this conversation (review grant)"),
                ],
                "indexes": [
                    models.Index(
                        fields=["-last_activity_at", "-id"],
                        include=("queue",),
                        name="conv_activity_queue_idx",
                    ),
                    models.Index(
                        condition=models.Q(("any_truncated", True)),
                        fields=["-last_activity_at", "-id"],
                        include=("queue",),
                        name="conv_truncated_idx",
                    ),
                    models.Index(
                        condition=models.Q(("any_refusal", True)),
                        fields=["-last_activity_at", "-id"],
                        include=("queue",),
                        name="conv_refusal_idx",
                    ),
                    models.Index(
                        condition=models.Q(("any_rewritten", True)),
                        fields=["-last_activity_at", "-id"],
                        include=("queue",),
                        name="conv_rewritten_idx",
                    ),
                    models.Index(
                        condition=models.Q(("status", "escalated")),
                        fields=["-last_activity_at", "-id"],
                        name="conv_escalated_idx",
                    ),
                    models.Index(
                        django.db.models.fields.json.KeyTextTransform("ticket", "labels"),
                        name="conv_ticket_idx",
                    ),
                    models.Index(
                        fields=["-output_tokens", "-id"],
                        include=("queue",),
                        name="conv_output_queue_idx",
                    ),
                    models.Index(
                        fields=["-slowest_ms", "-id"],
                        include=("queue",),
                        name="conv_slowest_queue_idx",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="ConversationEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "type",
                    models.CharField(
                        choices=[
                            ("user_replied", "User Replied"),
                            ("rated", "Rated"),
                            ("escalated", "Escalated"),
                            ("abandoned", "Abandoned"),
                            ("resolved", "Resolved"),
                        ],
                        max_length=20,
                    ),
                ),
                ("at", models.DateTimeField()),
                ("value", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="conversations.conversation",
                    ),
                ),
            ],
            options={
                "ordering": ["conversation", "at", "id"],
            },
        ),
        migrations.CreateModel(
            name="ConversationGroupObjectPermission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "content_object",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="conversations.conversation"
                    ),
                ),
                (
                    "group",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="auth.group"),
                ),
                (
                    "permission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="auth.permission"
                    ),
                ),
            ],
            options={
                "abstract": False,
            },
        ),
        migrations.CreateModel(
            name="ConversationUserObjectPermission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "content_object",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="conversations.conversation"
                    ),
                ),
                (
                    "permission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="auth.permission"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "abstract": False,
            },
        ),
        migrations.CreateModel(
            name="Exchange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "ordinal",
                    models.PositiveIntegerField(
                        help_text="1 for the conversation's first exchange"
                    ),
                ),
                (
                    "settings_ciphertext",
                    models.BinaryField(
                        help_text="the request's settings (system prompt, tools...), encrypted with the conversation's data key"
                    ),
                ),
                ("format", models.CharField(max_length=40)),
                ("streamed", models.BooleanField(default=False)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("latency_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("live_first_text_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("live_thinking_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("requested_model", models.CharField(blank=True, max_length=200)),
                ("response_model", models.CharField(blank=True, max_length=200)),
                ("response_id", models.CharField(blank=True, max_length=200)),
                ("thinking", models.CharField(blank=True, max_length=40)),
                ("effort", models.CharField(blank=True, max_length=40)),
                ("budget_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("max_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("input_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("cache_read_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("cache_write_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("output_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("reasoning_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("stop_reason", models.CharField(blank=True, max_length=60)),
                ("server_tool_counts", models.JSONField(blank=True, default=dict)),
                ("history_rewritten", models.BooleanField(default=False)),
                (
                    "rewritten_at",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="first history position that differs from what was stored",
                        null=True,
                    ),
                ),
                ("truncated", models.BooleanField(default=False)),
                ("refusal", models.BooleanField(default=False)),
                ("stream_error", models.CharField(blank=True, max_length=100)),
                (
                    "cancelled",
                    models.BooleanField(
                        db_default=False,
                        default=False,
                        help_text="the chat stopped reading the stream before its end: the stored answer is what had arrived",
                    ),
                ),
                (
                    "unknown_chunks",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="stream chunk types the format does not know and read past (AI SDK UI): the stored message may lack what they carried (docs/formats.md)",
                    ),
                ),
                ("tool_call_count", models.PositiveIntegerField(default=0)),
                (
                    "rewrite_kind",
                    models.CharField(
                        blank=True,
                        db_default="",
                        default="",
                        help_text="monitoring/rewrites.py",
                        max_length=30,
                    ),
                ),
                ("repeated_tool_calls", models.PositiveIntegerField(db_default=0, default=0)),
                ("tool_results", models.PositiveIntegerField(db_default=0, default=0)),
                ("tool_errors", models.PositiveIntegerField(db_default=0, default=0)),
                ("cache_lost_tokens", models.PositiveIntegerField(blank=True, null=True)),
                (
                    "prefix_sha256",
                    models.CharField(
                        blank=True,
                        db_default="",
                        default="",
                        help_text="of the settings before the history in the prompt (system, tools)",
                        max_length=64,
                    ),
                ),
                (
                    "input_transformations",
                    models.JSONField(blank=True, db_default=[], default=list),
                ),
                ("reasoning_estimated", models.BooleanField(db_default=False, default=False)),
                (
                    "path_parent",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text="the ordinal of the exchange whose path this one follows",
                        null=True,
                    ),
                ),
                ("path_kept", models.PositiveIntegerField(db_default=0, default=0)),
                (
                    "path_added",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.PositiveIntegerField(),
                        blank=True,
                        db_default=[],
                        default=list,
                        size=None,
                    ),
                ),
                ("branch", models.CharField(blank=True, db_default="", default="", max_length=20)),
                ("branched_at", models.PositiveIntegerField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="exchanges",
                        to="conversations.conversation",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="FieldPolicy",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "tool_name",
                    models.CharField(
                        default="*", help_text="a tool name, or * for any", max_length=200
                    ),
                ),
                (
                    "block_type",
                    models.CharField(
                        default="*",
                        help_text="a provider block type (tool_use...), or * for any",
                        max_length=100,
                    ),
                ),
                (
                    "side",
                    models.CharField(
                        choices=[("input", "tool input"), ("output", "tool result")], max_length=10
                    ),
                ),
                (
                    "path",
                    models.CharField(
                        help_text="JSON path, [*] for array items: $.customer.email, $.items[*].sku",
                        max_length=300,
                    ),
                ),
                (
                    "storage_class",
                    models.CharField(
                        choices=[
                            (
                                "identifier",
                                "identifier: kept and shown, linked to the source system",
                            ),
                            ("status", "status: kept and shown"),
                            ("display", "display: kept redacted, shown"),
                            (
                                "restricted",
                                "restricted: kept redacted, shown with view_restricted_fields",
                            ),
                            ("drop", "drop: not kept, [not kept] shown"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "note",
                    models.CharField(
                        blank=True, help_text="why this field is kept so", max_length=300
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name_plural": "field policies",
                "ordering": ["tool_name", "side", "path"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tool_name", "block_type", "side", "path"), name="field_policy_uniq"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Message",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("sequence", models.PositiveIntegerField()),
                ("role", models.CharField(max_length=20)),
                ("from_response", models.BooleanField(default=False)),
                (
                    "superseded",
                    models.BooleanField(
                        default=False,
                        help_text="a later version of this message was received (AI SDK continuation): kept as received, no longer current",
                    ),
                ),
                (
                    "raw_ciphertext",
                    models.BinaryField(
                        help_text="the message object exactly as first received, encrypted with the conversation's data key (crypto.py)"
                    ),
                ),
                ("sha256", models.CharField(help_text="of the raw text, UTF-8", max_length=64)),
                (
                    "canonical_sha256",
                    models.CharField(
                        help_text="of the parsed value, canonically serialised: matches resends",
                        max_length=64,
                    ),
                ),
                (
                    "alternate_sha256",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64),
                        blank=True,
                        default=list,
                        help_text="canonical hashes of the provider's other byte forms of this message (a Responses item's output_item.done form), then their prompt hashes: a resend of one is unmodified",
                        size=None,
                    ),
                ),
                (
                    "prompt_sha256",
                    models.CharField(
                        blank=True,
                        db_default="",
                        default="",
                        help_text="of what the model sees of it (the members the provider ignores left out)",
                        max_length=64,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="conversations.conversation",
                    ),
                ),
                (
                    "exchange",
                    models.ForeignKey(
                        help_text="the exchange that first brought this message",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="conversations.exchange",
                    ),
                ),
            ],
            options={
                "ordering": ["conversation", "sequence"],
            },
        ),
        migrations.CreateModel(
            name="Block",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveSmallIntegerField()),
                ("provider_type", models.CharField(max_length=100)),
                (
                    "block_class",
                    models.CharField(
                        choices=[
                            ("visible", "visible"),
                            ("audit", "audit"),
                            ("never", "never"),
                            ("unknown", "unknown"),
                        ],
                        max_length=10,
                    ),
                ),
                ("text", models.TextField(blank=True, help_text="VISIBLE: the visible text")),
                ("tool_name", models.CharField(blank=True, max_length=200)),
                ("call_id", models.CharField(blank=True, max_length=200)),
                ("is_error", models.BooleanField(null=True)),
                ("status", models.CharField(blank=True, max_length=60)),
                (
                    "fields",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="AUDIT: projected input/result fields, by storage class (dropped ones absent)",
                    ),
                ),
                (
                    "redacted",
                    models.BooleanField(default=False, help_text="NEVER: withheld by the provider"),
                ),
                (
                    "search",
                    models.GeneratedField(
                        db_persist=True,
                        expression=django.contrib.postgres.search.SearchVector(
                            "text", config="english"
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="conversations.conversation",
                    ),
                ),
                (
                    "message",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="blocks",
                        to="conversations.message",
                    ),
                ),
            ],
            options={
                "ordering": ["message", "position"],
            },
        ),
        migrations.CreateModel(
            name="ModelPrice",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "model",
                    models.CharField(
                        help_text="a snapshot, or an alias", max_length=200, unique=True
                    ),
                ),
                (
                    "input",
                    models.DecimalField(
                        decimal_places=4,
                        help_text="per million tokens",
                        max_digits=12,
                        validators=[
                            django.core.validators.MinValueValidator(
                                0, message="a price is not negative"
                            )
                        ],
                    ),
                ),
                (
                    "cache_read",
                    models.DecimalField(
                        decimal_places=4,
                        max_digits=12,
                        validators=[
                            django.core.validators.MinValueValidator(
                                0, message="a price is not negative"
                            )
                        ],
                    ),
                ),
                (
                    "cache_write",
                    models.DecimalField(
                        decimal_places=4,
                        max_digits=12,
                        validators=[
                            django.core.validators.MinValueValidator(
                                0, message="a price is not negative"
                            )
                        ],
                    ),
                ),
                (
                    "output",
                    models.DecimalField(
                        decimal_places=4,
                        help_text="reasoning tokens are billed at this price",
                        max_digits=12,
                        validators=[
                            django.core.validators.MinValueValidator(
                                0, message="a price is not negative"
                            )
                        ],
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["model"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("cache_read__gte", 0),
                            ("cache_write__gte", 0),
                            ("input__gte", 0),
                            ("output__gte", 0),
                        ),
                        name="model_price_not_negative",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="QueueGroupObjectPermission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "content_object",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="conversations.queue"
                    ),
                ),
                (
                    "group",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="auth.group"),
                ),
                (
                    "permission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="auth.permission"
                    ),
                ),
            ],
            options={
                "abstract": False,
            },
        ),
        migrations.CreateModel(
            name="QueueUserObjectPermission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "content_object",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="conversations.queue"
                    ),
                ),
                (
                    "permission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="auth.permission"
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "abstract": False,
            },
        ),
        migrations.CreateModel(
            name="ReviewAccessRequest",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "purpose",
                    models.CharField(
                        choices=[
                            ("complaint", "customer complaint"),
                            ("incident", "incident investigation"),
                            ("safety", "safety or abuse review"),
                            ("quality", "model behaviour investigation"),
                            ("legal", "legal or regulatory request"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "reference",
                    models.CharField(
                        help_text="the ticket id of the investigation", max_length=100
                    ),
                ),
                (
                    "days",
                    models.PositiveSmallIntegerField(help_text="how long the grant would last"),
                ),
                ("requested_at", models.DateTimeField(auto_now_add=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("expired", "Expired"),
                            ("approved", "Approved"),
                            ("denied", "Denied"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_requests",
                        to="conversations.conversation",
                    ),
                ),
                (
                    "decided_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "requester",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_requests",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-requested_at"],
            },
        ),
        migrations.CreateModel(
            name="Notification",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "channel",
                    models.CharField(
                        choices=[("webhook", "Webhook"), ("email", "Email")], max_length=10
                    ),
                ),
                ("target", models.CharField(max_length=500)),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, max_length=300)),
                ("next_attempt_at", models.DateTimeField()),
                (
                    "event",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to="conversations.alertevent",
                    ),
                ),
                (
                    "review_request",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to="conversations.reviewaccessrequest",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="ReviewAlert",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                (
                    "conversations",
                    models.PositiveIntegerField(
                        help_text="distinct conversations reviewed in the 24 hours before the last review"
                    ),
                ),
                (
                    "threshold",
                    models.PositiveIntegerField(help_text="REVIEW_ALERT_THRESHOLD at the time"),
                ),
                ("raised_at", models.DateTimeField(auto_now_add=True)),
                ("last_review_at", models.DateTimeField()),
                (
                    "reviewer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_alerts",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-day", "-raised_at"],
            },
        ),
        migrations.CreateModel(
            name="ReviewGrant",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "purpose",
                    models.CharField(
                        choices=[
                            ("complaint", "customer complaint"),
                            ("incident", "incident investigation"),
                            ("safety", "safety or abuse review"),
                            ("quality", "model behaviour investigation"),
                            ("legal", "legal or regulatory request"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "reference",
                    models.CharField(
                        help_text="the ticket id of the investigation", max_length=100
                    ),
                ),
                ("granted_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_grants",
                        to="conversations.conversation",
                    ),
                ),
                (
                    "granted_by",
                    models.ForeignKey(
                        blank=True,
                        help_text="empty: granted by the grant_review command",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "reviewer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="review_grants",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "revoked_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-granted_at"],
            },
        ),
        migrations.AddField(
            model_name="reviewaccessrequest",
            name="grant",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="conversations.reviewgrant",
            ),
        ),
        migrations.CreateModel(
            name="Rollup",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("hour", models.DateTimeField()),
                ("queue", models.CharField(blank=True, max_length=100)),
                ("requested_model", models.CharField(blank=True, max_length=200)),
                ("served_model", models.CharField(blank=True, max_length=200)),
                ("shard", models.PositiveSmallIntegerField(default=0)),
                ("exchanges", models.BigIntegerField(default=0)),
                (
                    "conversations",
                    models.BigIntegerField(default=0, help_text="exchanges that opened one"),
                ),
                (
                    "finishes",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=conversations.models.monitoring._finishes,
                        help_text="('stop', 'length', 'tool_use', 'refusal', 'other')",
                        size=None,
                    ),
                ),
                ("truncated", models.BigIntegerField(default=0)),
                ("truncated_reasoning_tokens", models.BigIntegerField(default=0)),
                ("truncated_output_tokens", models.BigIntegerField(default=0)),
                ("refusals", models.BigIntegerField(default=0)),
                ("input_tokens", models.BigIntegerField(default=0)),
                ("cache_read_tokens", models.BigIntegerField(default=0)),
                ("cache_write_tokens", models.BigIntegerField(default=0)),
                ("output_tokens", models.BigIntegerField(default=0)),
                ("reasoning_tokens", models.BigIntegerField(default=0)),
                (
                    "with_reasoning",
                    models.BigIntegerField(default=0, help_text="exchanges that reasoned"),
                ),
                (
                    "output_hist",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=conversations.models.monitoring._hist,
                        size=None,
                    ),
                ),
                (
                    "reasoning_hist",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=conversations.models.monitoring._hist,
                        size=None,
                    ),
                ),
                (
                    "latency_hist",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=conversations.models.monitoring._hist,
                        size=None,
                    ),
                ),
                ("tool_calls", models.BigIntegerField(default=0)),
                (
                    "tool_calls_hist",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(),
                        default=conversations.models.monitoring._hist,
                        size=None,
                    ),
                ),
                ("repeated_tool_calls", models.BigIntegerField(default=0)),
                (
                    "looping",
                    models.BigIntegerField(default=0, help_text="exchanges repeating a tool call"),
                ),
                ("tool_results", models.BigIntegerField(default=0)),
                ("tool_errors", models.BigIntegerField(default=0)),
                (
                    "rewritten",
                    models.BigIntegerField(
                        default=0,
                        help_text="exchanges whose history changed in what the model sees",
                    ),
                ),
                ("rewrite_tool_loop_reasoning", models.BigIntegerField(default=0)),
                ("rewrite_edited", models.BigIntegerField(default=0)),
                ("rewrite_reordered", models.BigIntegerField(default=0)),
                ("rewrite_reserialised", models.BigIntegerField(default=0)),
                ("rewrite_settings", models.BigIntegerField(default=0)),
                (
                    "rewrite_unseen",
                    models.BigIntegerField(
                        default=0,
                        help_text="exchanges whose history changed only in what the model never sees",
                    ),
                ),
                (
                    "cache_lost_tokens",
                    models.BigIntegerField(
                        default=0,
                        help_text="cache reads lost to rewrites the model sees (rewrites.py)",
                    ),
                ),
                (
                    "thinking_dropped",
                    models.BigIntegerField(
                        default=0,
                        help_text="thinking blocks the provider dropped (input_transformations)",
                    ),
                ),
                (
                    "thinking_mismatch_allowed",
                    models.BigIntegerField(
                        default=0,
                        help_text="thinking blocks shown despite a failed check (input_transformations)",
                    ),
                ),
                (
                    "reasoning_estimated",
                    models.BigIntegerField(
                        default=0,
                        help_text="exchanges whose reasoning tokens were estimated (profile usage)",
                    ),
                ),
                (
                    "output_sketch",
                    models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
                ),
                (
                    "latency_sketch",
                    models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
                ),
                (
                    "tool_calls_sketch",
                    models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["served_model", "queue", "hour"], name="signal_rollup_model_idx"
                    ),
                    models.Index(fields=["hour"], name="signal_rollup_hour_idx"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("hour", "queue", "requested_model", "served_model", "shard"),
                        name="signal_rollup_key",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="IdempotencyKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=200)),
                ("request_sha256", models.CharField(max_length=64)),
                ("status_code", models.PositiveSmallIntegerField()),
                ("response", models.JSONField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="conversations.conversation",
                    ),
                ),
                (
                    "token",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to="conversations.servicetoken"
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="ShareLink",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token_sha256", models.CharField(max_length=64, unique=True)),
                (
                    "boundary_sequence",
                    models.PositiveIntegerField(
                        help_text="messages up to this sequence are shown; later ones are not"
                    ),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("expires_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("opened_count", models.PositiveIntegerField(default=0)),
                ("last_opened_at", models.DateTimeField(blank=True, null=True)),
                ("token_ciphertext", models.BinaryField(blank=True, null=True)),
                (
                    "conversation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="share_links",
                        to="conversations.conversation",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "revoked_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="UnknownBlockType",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("format", models.CharField(max_length=40)),
                ("provider_type", models.CharField(max_length=100)),
                ("seen_count", models.PositiveIntegerField(default=0)),
                ("first_seen_at", models.DateTimeField(auto_now_add=True)),
                ("last_seen_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["format", "provider_type"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("format", "provider_type"), name="unknown_type_uniq"
                    )
                ],
            },
        ),
        migrations.AddConstraint(
            model_name="alert",
            constraint=models.UniqueConstraint(
                fields=("rule", "queue", "snapshot"), name="signal_alert_scope_uniq"
            ),
        ),
        migrations.AlterUniqueTogether(
            name="conversationgroupobjectpermission",
            unique_together={("group", "permission", "content_object")},
        ),
        migrations.AlterUniqueTogether(
            name="conversationuserobjectpermission",
            unique_together={("user", "permission", "content_object")},
        ),
        migrations.AddIndex(
            model_name="exchange",
            index=models.Index(
                fields=["response_model", "conversation"], name="exchange_model_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="exchange",
            index=models.Index(fields=["stop_reason", "conversation"], name="exchange_stop_idx"),
        ),
        migrations.AddConstraint(
            model_name="exchange",
            constraint=models.UniqueConstraint(
                fields=("conversation", "ordinal"), name="exchange_ordinal_uniq"
            ),
        ),
        migrations.AddConstraint(
            model_name="message",
            constraint=models.UniqueConstraint(
                fields=("conversation", "sequence"), name="message_sequence_uniq"
            ),
        ),
        migrations.AddIndex(
            model_name="block",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search"], name="block_search_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="block",
            index=django.contrib.postgres.indexes.GinIndex(
                condition=models.Q(("block_class", "audit")),
                fields=["fields"],
                name="block_fields_idx",
                opclasses=["jsonb_path_ops"],
            ),
        ),
        migrations.AddConstraint(
            model_name="block",
            constraint=models.UniqueConstraint(
                fields=("message", "position"), name="block_position_uniq"
            ),
        ),
        migrations.AddConstraint(
            model_name="block",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("block_class__in", ["never", "unknown"]), _negated=True),
                    models.Q(("text", ""), ("tool_name", ""), ("call_id", ""), ("fields", {})),
                    _connector="OR",
                ),
                name="block_never_is_empty",
            ),
        ),
        migrations.AlterUniqueTogether(
            name="queuegroupobjectpermission",
            unique_together={("group", "permission", "content_object")},
        ),
        migrations.AlterUniqueTogether(
            name="queueuserobjectpermission",
            unique_together={("user", "permission", "content_object")},
        ),
        migrations.AddIndex(
            model_name="notification",
            index=models.Index(
                fields=["delivered_at", "next_attempt_at"], name="signal_notify_due"
            ),
        ),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("event__isnull", False), ("review_request__isnull", True)),
                    models.Q(("event__isnull", True), ("review_request__isnull", False)),
                    _connector="OR",
                ),
                name="signal_notify_about_one",
            ),
        ),
        migrations.AddConstraint(
            model_name="reviewalert",
            constraint=models.UniqueConstraint(
                fields=("reviewer", "day"), name="review_alert_day_uniq"
            ),
        ),
        migrations.AddIndex(
            model_name="reviewgrant",
            index=models.Index(fields=["reviewer", "conversation"], name="review_grant_who_idx"),
        ),
        migrations.AddConstraint(
            model_name="reviewaccessrequest",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "pending")),
                fields=("requester", "conversation"),
                name="review_request_one_pending",
            ),
        ),
        migrations.AddConstraint(
            model_name="idempotencykey",
            constraint=models.UniqueConstraint(fields=("token", "key"), name="idempotency_uniq"),
        ),
        migrations.RunSQL(QUEUE_NAME_FIXED, QUEUE_NAME_FREE),
        migrations.RunSQL(SIGNAL_ADD, "DROP FUNCTION signal_add(bigint[], bigint[])"),
        migrations.RunSQL(
            "CREATE AGGREGATE signal_sum(bigint[]) (SFUNC = signal_add, STYPE = bigint[])",
            "DROP AGGREGATE signal_sum(bigint[])",
        ),
        migrations.RunSQL(SIGNAL_SKETCH_ADD, "DROP FUNCTION signal_sketch_add(jsonb, jsonb)"),
        migrations.RunPython(add_rules, remove_rules),
    ]
