"""Deletion requests: checked, previewed and submitted (a customer, or named conversations), with
their legal deadline. Executing them is ``execution.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dateutil.relativedelta import relativedelta
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

import audit
from conversations.models import Conversation

from .. import registry
from ..models import DeletionRequest
from .base import DeletionInvalid, ReferenceReused, user_of


def preview_counts(conversation_ids: Sequence[int]) -> dict[str, int]:
    counts = {entry.label: entry.rows(conversation_ids).count() for entry in registry.ERASED}
    counts[registry.KEYS.label] = registry.KEYS.rows(conversation_ids).count()
    return counts


def deletion_preview(
    *, customer: str = "", conversations: Sequence[str] = ()
) -> tuple[list[int], dict[str, int]]:
    """The internal ids and the rows per model a request would delete now."""
    qs = Conversation.objects.none()
    if customer:
        qs = Conversation.objects.filter(customer_external_id=customer)
    elif conversations:
        qs = Conversation.objects.filter(external_id__in=list(conversations))
    ids = sorted(qs.values_list("pk", flat=True))
    return ids, preview_counts(ids)


def legal_deadline(requested_at: datetime) -> datetime:
    """The legal deadline of a request received at ``requested_at``: one month (GDPR art. 12(3),
    ``RETENTION_LEGAL_DEADLINE_MONTHS``), the same day of the next month or its last day."""
    return requested_at + relativedelta(months=settings.RETENTION_LEGAL_DEADLINE_MONTHS)


def _request_hash(customer: str, conversations: Sequence[str]) -> str:
    what = {"customer": customer} if customer else {"conversations": sorted(set(conversations))}
    return audit.subject_hash("deletion-request:" + json.dumps(what, sort_keys=True))


def _check_request(
    *, reason: str, customer: str, conversations: Sequence[str], due: datetime | None
) -> None:
    if bool(customer) == bool(conversations):
        raise DeletionInvalid("name either a customer or conversations", field="customer")
    if customer and not customer.strip():
        raise DeletionInvalid("the customer id is blank", field="customer")
    if any(not c.strip() for c in conversations):
        raise DeletionInvalid("a conversation id is blank", field="conversations")
    if not reason.strip():
        raise DeletionInvalid("a deletion request states its reason", field="reason")
    if due is not None:
        if timezone.is_naive(due):
            raise DeletionInvalid("the due date must carry a time zone", field="due")
        deadline = legal_deadline(timezone.now())
        if due > deadline:
            raise DeletionInvalid(
                f"due after the legal deadline ({deadline:%Y-%m-%d %H:%M %Z}, one month from "
                "receipt)",
                field="due",
            )


@transaction.atomic
def deletion_request_submit(
    *,
    reason: str,
    customer: str = "",
    conversations: Sequence[str] = (),
    due: datetime | None = None,
    reference: str = "",
    actor: Any = None,
) -> DeletionRequest:
    """A request to erase a customer (every conversation of theirs, and tombstone them) or named
    conversations; due at ``due`` (default: now, i.e. the next tick; never after the legal
    deadline). ``reference``: the requester's ticket id, unique (see
    ``deletion_request_submit_once``). Audited. Raises ``DeletionInvalid``."""
    _check_request(reason=reason, customer=customer, conversations=conversations, due=due)
    ids, preview = deletion_preview(customer=customer, conversations=conversations)
    request = DeletionRequest.objects.create(
        scope=DeletionRequest.Scope.CUSTOMER if customer else DeletionRequest.Scope.CONVERSATIONS,
        subject=customer,
        subject_hash=audit.subject_hash(customer) if customer else "",
        conversation_external_ids=list(conversations),
        conversation_ids=ids,
        reason=reason,
        reference=reference,
        request_hash=_request_hash(customer, conversations),
        requested_by=user_of(actor),
        requester=audit.actor_label(actor),
        due=due or timezone.now(),
        preview=preview,
    )
    audit.record(
        "deletion.requested",
        actor=actor,
        subject=customer or None,
        request=request.pk,
        scope=request.scope,
        conversations=ids,
        reason=reason,
        due=request.due.isoformat(),
        reference=reference,
    )
    return request


def deletion_request_submit_once(
    *,
    reference: str,
    reason: str,
    customer: str = "",
    conversations: Sequence[str] = (),
    due: datetime | None = None,
    actor: Any = None,
) -> tuple[DeletionRequest, bool]:
    """Submit, unless a request with this reference exists: then that one is returned (False)
    when it asked for the same thing, and ``ReferenceReused`` raised when it did not. A ticketing
    system retrying a submission gets the same request back."""
    existing = DeletionRequest.objects.filter(reference=reference).first()
    if existing is None:
        try:
            with transaction.atomic():
                request = deletion_request_submit(
                    reason=reason,
                    customer=customer,
                    conversations=conversations,
                    due=due,
                    reference=reference,
                    actor=actor,
                )
            return request, True
        except IntegrityError:
            # A concurrent submission with the same reference committed first.
            existing = DeletionRequest.objects.get(reference=reference)
    if existing.request_hash != _request_hash(customer, conversations):
        raise ReferenceReused(
            f"reference {reference!r} names deletion request {existing.pk}, which asked for "
            "something else",
            field="reference",
        )
    return existing, False
