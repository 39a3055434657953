"""The list sorted by output tokens and by the slowest model call (issue 35): two columns kept
by ingest, filled here from the stored exchanges, and an index for each order shaped like the
activity's (with the queue), so a page of them is an index range at a million conversations."""

from __future__ import annotations

from django.db import migrations, models

FILL = """
UPDATE conversations_conversation AS c
SET output_tokens = e.output, slowest_ms = e.slowest
FROM (
    SELECT conversation_id, coalesce(sum(output_tokens), 0) AS output,
           coalesce(max(latency_ms), 0) AS slowest
    FROM conversations_exchange
    GROUP BY conversation_id
) AS e
WHERE c.id = e.conversation_id AND (e.output <> 0 OR e.slowest <> 0)
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0030_last_activity_is_the_latest_message")]
    operations = [
        migrations.AddField(
            model_name="conversation",
            name="output_tokens",
            field=models.BigIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="conversation",
            name="slowest_ms",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="conversation",
            index=models.Index(
                fields=["-output_tokens", "-id"], include=["queue"], name="conv_output_queue_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="conversation",
            index=models.Index(
                fields=["-slowest_ms", "-id"], include=["queue"], name="conv_slowest_queue_idx"
            ),
        ),
        # The planner's statistics of the new columns: without them a bound on output tokens
        # is guessed to keep a third of the store, and read in activity order (a full scan).
        migrations.RunSQL("ANALYZE conversations_conversation", migrations.RunSQL.noop),
    ]
