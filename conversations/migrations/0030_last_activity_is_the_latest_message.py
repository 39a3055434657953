"""Last activity is the latest message: an answer arrives ``latency_ms`` after its call started
(ingest counted the start until now, so the list showed a time before the last message). Stored
conversations are moved to their latest answer's time; events already counted stay counted
(``GREATEST``)."""

from __future__ import annotations

from django.db import migrations

FORWARD = """
UPDATE conversations_conversation AS c
SET last_activity_at = e.latest
FROM (
    SELECT conversation_id, max(started_at + latency_ms * interval '1 millisecond') AS latest
    FROM conversations_exchange
    WHERE started_at IS NOT NULL AND latency_ms IS NOT NULL
    GROUP BY conversation_id
) AS e
WHERE c.id = e.conversation_id AND e.latest > c.last_activity_at
"""


class Migration(migrations.Migration):
    dependencies = [("conversations", "0029_review_request_notifications")]
    operations = [migrations.RunSQL(FORWARD, migrations.RunSQL.noop)]
