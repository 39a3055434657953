"""Indexes of the conversation list at a million conversations (bench/console.py).

- ``conv_activity_queue_idx`` replaces ``conv_activity_idx``: the same order with ``queue``
  included, so the list's narrow first query (``selectors.conversation_list``) skips the
  conversations of other queues inside the index.
- ``conv_{truncated,refusal,rewritten}_idx``: partial indexes in the list's order, so a flag
  filter starts at its first flagged conversation instead of reading past the unflagged ones.
- ``exchange_model_idx``, ``exchange_stop_idx``: the model and finish-reason filters probe each
  conversation's exchanges in the index alone.

Built ``CONCURRENTLY`` (the migration is not atomic), the new list index before the old one goes,
so a large store keeps serving and ingesting while they are built.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


def _flag_index(flag: str) -> models.Index:
    return models.Index(
        condition=models.Q((flag, True)),
        fields=["-last_activity_at", "-id"],
        include=("queue",),
        name=f"conv_{flag.removeprefix('any_')}_idx",
    )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("conversations", "0007_exchange_unknown_chunks"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="conversation",
            index=models.Index(
                fields=["-last_activity_at", "-id"],
                include=("queue",),
                name="conv_activity_queue_idx",
            ),
        ),
        RemoveIndexConcurrently(model_name="conversation", name="conv_activity_idx"),
        AddIndexConcurrently(model_name="conversation", index=_flag_index("any_truncated")),
        AddIndexConcurrently(model_name="conversation", index=_flag_index("any_refusal")),
        AddIndexConcurrently(model_name="conversation", index=_flag_index("any_rewritten")),
        AddIndexConcurrently(
            model_name="exchange",
            index=models.Index(
                fields=["response_model", "conversation"], name="exchange_model_idx"
            ),
        ),
        AddIndexConcurrently(
            model_name="exchange",
            index=models.Index(fields=["stop_reason", "conversation"], name="exchange_stop_idx"),
        ),
    ]
