# The rollups keep DDSketch bins beside their histograms (conversations/monitoring/sketches.py), so
# the quantiles read from them are within a stated relative error of exact; the alert rules'
# metric choices are read from the metrics' registry.

from typing import Any

from django.db import migrations, models

import conversations.monitoring.metrics
from conversations.monitoring import sketches

_SKETCHES = ("output_sketch", "latency_sketch", "tool_calls_sketch")


def backfill(apps: Any, schema_editor: Any) -> None:
    """Each existing rollup key's sketches, from its stored exchanges, into its lowest shard (the
    readers sum the shards; erasure subtracts from the same bins)."""
    exchange = apps.get_model("conversations", "Exchange")
    rollup = apps.get_model("conversations", "Rollup")
    found: dict[tuple[Any, ...], dict[str, dict[str, int]]] = {}
    rows = exchange.objects.values_list(
        "started_at",
        "created_at",
        "conversation__queue",
        "requested_model",
        "response_model",
        "output_tokens",
        "latency_ms",
        "tool_call_count",
    )
    for started, created, queue, requested, served, output, latency, calls in rows.iterator(
        chunk_size=5000
    ):
        hour = (started or created).replace(minute=0, second=0, microsecond=0)
        per = found.setdefault(
            (hour, queue, requested or "", served or ""), {c: {} for c in _SKETCHES}
        )
        for column, v in (
            ("output_sketch", output),
            ("latency_sketch", latency),
            ("tool_calls_sketch", calls or 0),
        ):
            if v is not None:
                sketches.count_one(per[column], v)
    for (hour, queue, requested, served), per in found.items():
        row = (
            rollup.objects.filter(
                hour=hour, queue=queue, requested_model=requested, served_model=served
            )
            .order_by("shard")
            .first()
        )
        if row is not None:
            for column, bins in per.items():
                setattr(row, column, bins)
            row.save(update_fields=list(_SKETCHES))


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0021_alert_destinations"),
    ]

    operations = [
        # Bin-wise sum of two sketches, empty bins left out (the rollups' upsert and erasure).
        migrations.RunSQL(
            """
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
            """,
            "DROP FUNCTION signal_sketch_add(jsonb, jsonb)",
        ),
        migrations.AddField(
            model_name="rollup",
            name="latency_sketch",
            field=models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
        ),
        migrations.AddField(
            model_name="rollup",
            name="output_sketch",
            field=models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
        ),
        migrations.AddField(
            model_name="rollup",
            name="tool_calls_sketch",
            field=models.JSONField(db_default=models.Value({}, models.JSONField()), default=dict),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        # The alert metrics' choices come from their registry (signals/metrics.py).
        migrations.AlterField(
            model_name="alertrule",
            name="metric",
            field=models.CharField(choices=conversations.monitoring.metrics.choices, max_length=30),
        ),
    ]
