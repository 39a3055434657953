from typing import Any

import pytest

from conversations.models import Block, Conversation
from tests.retention.helpers import ingest

pytestmark = pytest.mark.django_db


def test_ingest(api: Any) -> None:
    ingest(api, "conv-a", "cus-a", "MARK-A")
    c = Conversation.objects.get(external_id="conv-a")
    assert Block.objects.filter(conversation=c, text__contains="MARK-A").count() == 2
