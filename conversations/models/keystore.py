"""The data keys, one per conversation, in their own database (``keystore/routers.py`` routes
this model there; ``keystore/keys.py`` creates, unwraps and destroys them)."""

from __future__ import annotations

from django.db import models


class DataKey(models.Model):
    """A conversation's data key, wrapped by a master key. Lives in the ``keys`` database (see
    ``routers.py``): no foreign key, the conversation is named by its id. Deleting this row makes
    the conversation's messages unreadable everywhere, backups included."""

    conversation_id = models.BigIntegerField(unique=True)
    master_key_id = models.CharField(max_length=16)
    wrapped_key = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)
    rewrapped_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"data key of conversation {self.conversation_id}"
