"""A customer with something in every store: conversations in two queues (reasoning, a dropped
tool field and PII planted, tests/console/conftest.py), a reasoning review, two exports, a live
and a revoked share link (the live one opened), a legal hold; and another customer beside them,
whose data no report of the first may count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation
from conversations.reviews import review_grant_create, review_read
from conversations.sharing.links import share_link_create, share_link_revoke
from conversations.sharing.selectors import conversation_export_read, share_open_read
from retention.services import legal_hold_place
from tests.console.conftest import exchange, ingest
from tests.factories import UserFactory, roles

CUSTOMER = "cus-subject-7f3e"
OTHER = "cus-bystander-1a2b"
REVIEW_STATEMENT = "checking the refund complaint of ticket T-88"


def customer_exchange(conversation: str, queue: str, customer: str = CUSTOMER) -> dict[str, Any]:
    return {**exchange(conversation, queue), "customer": customer}


@dataclass
class Subject:
    conversations: list[Conversation]
    other: Conversation
    users: dict[str, Any]
    live_link: int
    revoked_link: int
    hold: int


def make_subject(n_billing: int = 2) -> Subject:
    roles()
    users = {
        "agent": UserFactory(username="agent", groups=["support_agent"], queues=["billing"]),
        "shipper": UserFactory(username="shipper", groups=["support_agent"], queues=["shipping"]),
        "reviewer": UserFactory(username="reviewer", groups=["reviewer"], queues=["billing"]),
        "compliance": UserFactory(username="compliance", groups=["compliance"]),
        "admin": UserFactory(username="admin", groups=["admin"], is_staff=True),
        "stranger": UserFactory(username="stranger", groups=["support_agent"]),
    }
    conversations = [ingest(customer_exchange(f"s-bill-{i}", "billing")) for i in range(n_billing)]
    conversations.append(ingest(customer_exchange("s-ship-0", "shipping")))
    other = ingest(customer_exchange("o-bill-0", "billing", customer=OTHER))
    first = conversations[0]
    review_grant_create(
        reviewer=users["reviewer"],
        conversation=first,
        purpose="complaint",
        reference="T-88",
        expires_at=timezone.now() + timedelta(days=2),
    )
    review_read(
        user=users["reviewer"],
        conversation_id=first.pk,
        purpose="complaint",
        reference="T-88",
        statement=REVIEW_STATEMENT,
    )
    conversation_export_read(user=users["agent"], id=first.pk, fmt="md")
    conversation_export_read(user=users["agent"], id=conversations[1].pk, fmt="json")
    # Another customer's export and link: never counted for the subject.
    conversation_export_read(user=users["agent"], id=other.pk, fmt="txt")
    share_link_create(actor=users["agent"], conversation_id=other.pk)
    live, token = share_link_create(actor=users["agent"], conversation_id=first.pk)
    revoked, _ = share_link_create(actor=users["agent"], conversation_id=conversations[1].pk)
    share_link_revoke(actor=users["agent"], link_id=revoked.pk)
    share_open_read(token=token)
    hold = legal_hold_place(
        scope="subject", reason="litigation L-3", customer=CUSTOMER, actor=users["compliance"]
    )
    return Subject(conversations, other, users, live.pk, revoked.pk, hold.pk)


@pytest.fixture
def subject(db: Any) -> Subject:
    return make_subject()
