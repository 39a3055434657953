"""After an erasure, a pg_dump of the main database (and Redis) holds nothing of the subject."""

from __future__ import annotations

from typing import Any

import pytest

from retention.models import DeletionRequest
from retention.services import deletion_request_submit, retention_tick
from tests.dumps import pg_dump, redis_dump
from tests.retention.clock import ingest_world

SUBJECT = "cus-DUMP-SUBJECT-7f3a"
CONVERSATIONS = ["conv-DUMP-ONE-19ce", "conv-DUMP-TWO-5b08"]
TEXTS = ["MARK-DUMP-VISIBLE-a41f", "MARK-DUMP-VISIBLE-e203"]
OTHER = ("cus-DUMP-OTHER-c6d1", "conv-DUMP-OTHER-0a9e", "MARK-DUMP-OTHER-77b4")


@pytest.mark.django_db(transaction=True)
def test_the_dump_holds_nothing_of_the_erased_subject(transactional_db: Any) -> None:
    ingest_world(SUBJECT, CONVERSATIONS, TEXTS, OTHER)
    before = pg_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value in before  # the dump would show a leak
    request = deletion_request_submit(customer=SUBJECT, reason="erasure request")

    retention_tick()

    assert DeletionRequest.objects.get(pk=request.pk).status == "completed"
    dump = pg_dump()
    redis = redis_dump()
    for value in (SUBJECT, *CONVERSATIONS, *TEXTS):
        assert value not in dump, value
        assert value not in redis, value
    for value in OTHER:
        assert value in dump, value
