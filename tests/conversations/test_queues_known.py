"""A queue exists as soon as a conversation names it; ingest remembers the queues it created
(so a batch asks no more), and forgets them when a queue is deleted, so the next conversation
naming it creates it again."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.models import Queue
from tests.factories import post_exchange


@pytest.mark.django_db(transaction=True)
def test_a_deleted_queue_is_created_again_by_the_next_conversation_naming_it(api: Any) -> None:
    post_exchange(api, conversation="conv-q-1", queue="returns")
    assert Queue.objects.filter(name="returns").exists()
    Queue.objects.filter(name="returns").delete()  # an admin deletes it (a post_delete each)
    post_exchange(api, conversation="conv-q-2", queue="returns")
    assert Queue.objects.filter(name="returns").exists()
