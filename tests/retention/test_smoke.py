from typing import Any

import pytest

from conversations.models import Block, Conversation
from tests.factories import post_exchange

pytestmark = pytest.mark.django_db


def test_ingest(api: Any) -> None:
    post_exchange(api, conversation="conv-a", customer="cus-a", text="MARK-A")
    c = Conversation.objects.get(external_id="conv-a")
    assert Block.objects.filter(conversation=c, text__contains="MARK-A").count() == 2
