# Each exchange's path through the conversation's messages (DESIGN section 20,
# conversations/branches.py). Exchanges stored before paths were kept form one chain: each keeps
# its predecessor's whole path and adds the messages it brought that are still current, so every
# path ends where the replay ended before (the current messages in sequence order).

import django.contrib.postgres.fields
from django.db import migrations, models

FILL = """
WITH added AS (
    SELECT x.id, x.conversation_id, x.ordinal,
           COALESCE(array_agg(m.sequence ORDER BY m.sequence)
                    FILTER (WHERE m.id IS NOT NULL), '{}') AS seqs
    FROM conversations_exchange x
    LEFT JOIN conversations_message m ON m.exchange_id = x.id AND NOT m.superseded
    GROUP BY x.id
), steps AS (
    SELECT id, ordinal, seqs,
           COALESCE(sum(cardinality(seqs)) OVER (
               PARTITION BY conversation_id ORDER BY ordinal
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS kept
    FROM added
)
UPDATE conversations_exchange e
SET path_parent = CASE WHEN s.ordinal > 1 THEN s.ordinal - 1 END,
    path_kept = s.kept,
    path_added = s.seqs
FROM steps s
WHERE s.id = e.id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0027_backend_conformance"),
    ]

    operations = [
        migrations.AddField(
            model_name="exchange",
            name="branch",
            field=models.CharField(blank=True, db_default="", default="", max_length=20),
        ),
        migrations.AddField(
            model_name="exchange",
            name="branched_at",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="exchange",
            name="path_added",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.PositiveIntegerField(),
                blank=True,
                db_default=[],
                default=list,
                size=None,
            ),
        ),
        migrations.AddField(
            model_name="exchange",
            name="path_kept",
            field=models.PositiveIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="exchange",
            name="path_parent",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="the ordinal of the exchange whose path this one follows",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="message",
            name="alternate_sha256",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=64),
                blank=True,
                default=list,
                help_text="canonical hashes of the provider's other byte forms of this message "
                "(a Responses item's output_item.done form), then their prompt hashes: a resend "
                "of one is unmodified",
                size=None,
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
    ]
