"""The chain's hash and the keyed hashes that stand in for external ids.

Pure functions (no model, no query): ``record()`` and the verifier compute a row's hash with the
same ``row_hash``, so what one writes the other can check.

The row hash is SHA-256 over the canonical serialisation of the row: sorted-key compact JSON
(``separators=(",", ":")``, ``ensure_ascii=False``, UTF-8) of ``id``, ``at`` (ISO 8601 in UTC with
microseconds: ``2025-01-31T12:00:00.000000+00:00``), ``code``, ``actor_id``, ``actor_label``,
``conversation_id``, ``subject_hash``, ``details`` and ``prev_hash``. The first row's ``prev_hash``
is ``GENESIS`` (64 zeros). Changing any of this breaks every existing chain: don't.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from .registry import DetailsRefused

__all__ = ["GENESIS", "canonical", "clean_details", "query_hash", "row_hash", "subject_hash"]

GENESIS = "0" * 64


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def iso_utc(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("audit timestamps are aware datetimes")
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def row_hash(
    *,
    id: int,
    at: datetime,
    code: str,
    actor_id: int | None,
    actor_label: str,
    conversation_id: int | None,
    subject_hash: str | None,
    details: dict[str, Any],
    prev_hash: str,
) -> str:
    return hashlib.sha256(
        canonical(
            {
                "id": id,
                "at": iso_utc(at),
                "code": code,
                "actor_id": actor_id,
                "actor_label": actor_label,
                "conversation_id": conversation_id,
                "subject_hash": subject_hash,
                "details": details,
                "prev_hash": prev_hash,
            }
        )
    ).hexdigest()


def clean_details(details: dict[str, Any]) -> dict[str, Any]:
    """Refuse values that would not come back from jsonb exactly as hashed.

    jsonb keeps str, int, bool, null, lists and objects with str keys as they are. It turns floats
    into numerics (``1e100`` comes back as an int), rejects NUL and lone surrogates, and JSON turns
    tuples into lists and int keys into strings: any of those would make a good row fail
    verification later, so they are refused now. Tuples become lists (that much is harmless).
    """
    return {key: _clean(value, key) for key, value in details.items()}


def _clean(value: Any, at: str) -> Any:
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        _check_text(value, at)
        return value
    if isinstance(value, (list, tuple)):
        return [_clean(v, f"{at}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise DetailsRefused(f"audit detail {at}: keys must be strings, not {k!r}")
            _check_text(k, at)
            out[k] = _clean(v, f"{at}.{k}")
        return out
    raise DetailsRefused(
        f"audit detail {at}: {type(value).__name__} is not stored exactly by jsonb; "
        "use str, int, bool, None, lists and dicts (a float or a date as a string)"
    )


def _check_text(text: str, at: str) -> None:
    if "\x00" in text:
        raise DetailsRefused(f"audit detail {at}: NUL is not storable in jsonb")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise DetailsRefused(f"audit detail {at}: not valid Unicode (lone surrogate)") from None


# The keyed hashes. Rows name a customer only by HMAC-SHA256 of the customer id, so that the log
# never holds an external id and an erasure never has to rewrite it (invariant 6), while the same
# customer still hashes to the same value (compliance can filter by subject). The key is
# settings.AUDIT_HMAC_KEY when set; otherwise it is derived from SECRET_KEY, so rotating
# SECRET_KEY changes the hashes written from then on, and filtering by subject no longer finds
# the rows written before. Production should set AUDIT_HMAC_KEY and keep it.


def hmac_key() -> bytes:
    configured = getattr(settings, "AUDIT_HMAC_KEY", None)
    if configured:
        return configured.encode("utf-8") if isinstance(configured, str) else bytes(configured)
    return hmac.new(
        settings.SECRET_KEY.encode("utf-8"), b"audit.subject_hash", hashlib.sha256
    ).digest()


def subject_hash(subject: str) -> str:
    """The keyed hash that stands for a customer (data subject) id in the log."""
    if not isinstance(subject, str) or not subject:
        raise TypeError("subject is the customer id as a non-empty string")
    return hmac.new(hmac_key(), subject.encode("utf-8"), hashlib.sha256).hexdigest()


def query_hash(query: str) -> str:
    """The keyed hash of a search query (which may hold a customer id or an e-mail address)."""
    # A key of its own (derived), so that a query and a subject id of the same text differ.
    key = hmac.new(hmac_key(), b"audit.query_hash", hashlib.sha256).digest()
    return hmac.new(key, query.encode("utf-8"), hashlib.sha256).hexdigest()
