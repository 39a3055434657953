"""Receipts: the verification scan that looks for anything left of an erasure, and the HMAC that
signs what a request removed."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from collections.abc import Sequence
from typing import Any

import redis
from django.conf import settings

from conversations.models import Conversation

from .. import registry
from ..models import Receipt

logger = logging.getLogger(__name__)


def verification_scan(
    *, conversation_ids: Sequence[int], external_ids: Sequence[str], subject: str = ""
) -> dict[str, Any]:
    """Look for anything left of the erased conversations: rows of every registered model (the
    keys database included) by internal id, conversations by external id or customer, and Redis
    keys naming an external id or the customer."""
    found: dict[str, int] = {}
    for entry in registry.ALL:
        n = entry.rows(conversation_ids).count() if conversation_ids else 0
        if n:
            found[entry.label] = n
    by_external = Conversation.objects.filter(external_id__in=list(external_ids)).count()
    if subject:
        by_external += Conversation.objects.filter(customer_external_id=subject).count()
    if by_external:
        found["conversations.conversation(external)"] = by_external
    needles = [*external_ids, *([subject] if subject else [])]
    # Redis down: the scan says it could not look there (its live state expires by itself and the
    # clock's sweep forgets it), rather than fail the erasure.
    try:
        redis_hits = _redis_keys_naming(needles)
        redis_scanned = True
    except redis.RedisError:
        logger.warning("verification scan: Redis did not answer; its keys were not scanned")
        redis_hits, redis_scanned = 0, False
    if redis_hits:
        found["redis"] = redis_hits
    return {
        "ok": not found,
        "found": found,
        "tables": [e.label for e in registry.ALL],
        "redis": redis_scanned,
        "conversations": len(conversation_ids),
    }


def _redis_keys_naming(needles: Sequence[str]) -> int:
    """Keys of the Redis database that contain any of ``needles``: one SCAN pass over the
    keyspace, whatever the number of needles (a retention request names thousands)."""
    if not needles:
        return 0
    pattern = re.compile(
        "|".join(re.escape(n) for n in sorted(set(needles), key=len, reverse=True)).encode()
    )
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return sum(1 for key in client.scan_iter(count=1000) if pattern.search(key))
    finally:
        client.close()


def _receipt_key() -> bytes:
    configured = settings.RETENTION_RECEIPT_KEY
    if configured:
        return str(configured).encode("utf-8")
    return hmac.new(
        settings.SECRET_KEY.encode("utf-8"), b"retention.receipt", hashlib.sha256
    ).digest()


def receipt_hmac(receipt: Receipt) -> str:
    body = {
        "request": receipt.request_id,
        "subject_hash": receipt.subject_hash,
        "conversations": receipt.conversations,
        "counts": receipt.counts,
        "keys_destroyed": receipt.keys_destroyed,
        "verification": receipt.verification,
        "issued_at": receipt.issued_at.isoformat(timespec="microseconds"),
    }
    # Receipts issued before backups had a horizon keep the body (and HMAC) they were signed with.
    if receipt.backup_horizon is not None:
        body["backup_horizon"] = receipt.backup_horizon.isoformat(timespec="microseconds")
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(_receipt_key(), data.encode("utf-8"), hashlib.sha256).hexdigest()


def receipt_verify(receipt: Receipt) -> bool:
    return hmac.compare_digest(receipt_hmac(receipt), receipt.hmac)
