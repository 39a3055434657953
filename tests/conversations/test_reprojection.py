"""Policy changes apply to old conversations: a background job re-projects them from the
verbatim store; the policy admin previews a draft on a stored exchange."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Block, Conversation, FieldPolicy, ReprojectionJob
from conversations.services import field_policy_delete, field_policy_save, reprojection_run
from tests.factories import demo_conversation

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def old_conversation(api: APIClient) -> Conversation:
    # The demo's Anthropic conversation: a tool loop whose get_order result (a JSON text)
    # carries a shipping address and an e-mail address, dropped by default.
    for body in demo_conversation("anthropic.messages"):
        assert api.post("/api/v1/exchanges", body, format="json").status_code == 201
    return Conversation.objects.get()


def result_block(conversation: Conversation) -> Block:
    return Block.objects.get(conversation=conversation, provider_type="tool_result")


def test_changing_a_policy_reprojects_an_old_conversation(
    old_conversation: Conversation, admin_client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    before = result_block(old_conversation)
    assert before.tool_name == "get_order"  # resolved from the call, for per-tool policies
    assert "output:$.shipping_address" in before.fields["dropped"]
    page = admin_client.get(f"/conversations/{old_conversation.pk}/")
    assert b"rue de la Paix" not in page.content

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = field_policy_save(
            policy=FieldPolicy(
                tool_name="get_order",
                side="output",
                path="$.shipping_address",
                storage_class="display",
            )
        )
    assert len(callbacks) == 2  # the policy cache is invalidated and the job is queued
    assert ReprojectionJob.objects.get().status == "pending"
    reprojection_run(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.percent) == ("completed", 1, 1, 100)
    after = result_block(old_conversation)
    kept = {e["path"]: e["value"] for e in after.fields["kept"]}
    assert "rue de la Paix" in kept["$.shipping_address"]
    page = admin_client.get(f"/conversations/{old_conversation.pk}/")
    assert b"rue de la Paix" in page.content
    # The e-mail address next to it is still dropped, and never on the page.
    assert b"@example.com" not in page.content

    # Deleting the policy takes the field out again.
    policy = FieldPolicy.objects.get()
    with django_capture_on_commit_callbacks(execute=False):
        job = field_policy_delete(policy=policy)
    reprojection_run(job_id=job.pk)
    assert "output:$.shipping_address" in result_block(old_conversation).fields["dropped"]


def test_a_job_is_idempotent_and_resumes(old_conversation: Conversation) -> None:
    job = ReprojectionJob.objects.create(reason="test", last_conversation_id=old_conversation.pk)
    reprojection_run(job_id=job.pk)  # resumes after the last recorded conversation: none left
    job.refresh_from_db()
    assert job.status == "completed"
    blocks = list(Block.objects.order_by("pk").values_list("pk", flat=True))
    reprojection_run(job_id=job.pk)  # finished: left alone
    assert list(Block.objects.order_by("pk").values_list("pk", flat=True)) == blocks


def test_reprojection_keeps_what_ingest_stored(old_conversation: Conversation) -> None:
    def snapshot() -> list[tuple]:
        return list(
            Block.objects.order_by("message__sequence", "position").values_list(
                "message_id",
                "position",
                "provider_type",
                "block_class",
                "text",
                "tool_name",
                "call_id",
                "is_error",
                "status",
                "fields",
                "redacted",
            )
        )

    before = snapshot()
    job = ReprojectionJob.objects.create(reason="same policies")
    reprojection_run(job_id=job.pk)
    assert snapshot() == before


def test_policy_admin_preview_shows_the_draft_without_saving(
    old_conversation: Conversation, admin_client: Any
) -> None:
    exchange = old_conversation.exchanges.order_by("ordinal").last()
    response = admin_client.get(
        "/admin/conversations/fieldpolicy/preview/",
        {
            "exchange": exchange.pk,
            "tool_name": "get_order",
            "side": "output",
            "path": "$.shipping_address",
            "storage_class": "display",
        },
    )
    assert response.status_code == 200
    content = response.content.decode()
    assert "rue de la Paix" in content  # with the draft
    assert "output:$.shipping_address [not kept]" in content  # now
    assert not FieldPolicy.objects.exists()
    assert not ReprojectionJob.objects.exists()


def test_policy_admin_preview_refuses_bad_input(admin_client: Any) -> None:
    response = admin_client.get(
        "/admin/conversations/fieldpolicy/preview/",
        {
            "exchange": 999999,
            "side": "output",
            "path": "customer.email",
            "storage_class": "display",
        },
    )
    assert response.status_code == 200
    assert response.context["form"].errors.keys() == {"path"}
    response = admin_client.get(
        "/admin/conversations/fieldpolicy/preview/",
        {"exchange": 999999, "side": "output", "path": "$.email", "storage_class": "display"},
    )
    assert "no such exchange" in response.content.decode()


def test_policy_admin_saves_through_the_service(
    admin_client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = admin_client.post(
            "/admin/conversations/fieldpolicy/add/",
            {
                "tool_name": "get_order",
                "block_type": "*",
                "side": "output",
                "path": "$.carrier",
                "storage_class": "status",
                "note": "",
            },
        )
    assert response.status_code == 302, response.content[:500]
    assert FieldPolicy.objects.get().path == "$.carrier"
    assert ReprojectionJob.objects.get().reason.startswith("policy saved")
    bad = admin_client.post(
        "/admin/conversations/fieldpolicy/add/",
        {
            "tool_name": "*",
            "block_type": "*",
            "side": "output",
            "path": "carrier",
            "storage_class": "status",
        },
    )
    assert bad.status_code == 200
    assert "a JSON path" in bad.content.decode()
