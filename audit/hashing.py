"""The hashes of the audit log, and the keyed hashes that stand in for external ids.

Pure functions (no model, no query): the sealer and the verifier compute every hash with the same
functions here, so what one writes the other can check.

- ``event_hash(row)``: SHA-256 over the canonical serialisation of the event's values, the fields
  named in ``EVENT_FIELDS`` (the one list of them: the sealer and the verifier read exactly these
  columns). Canonical: sorted-key compact JSON (``separators=(",", ":")``, ``ensure_ascii=False``,
  UTF-8), ``at`` as ISO 8601 in UTC with microseconds (``2025-01-31T12:00:00.000000+00:00``).
- ``seal_hash``: the chain link, over ``position``, ``event_hash`` and the previous seal's hash
  (``GENESIS``, 64 zeros, before the first).
- ``digest_hash`` over a batch's fields and the previous digest's hash, and ``digest_signature``:
  HMAC-SHA256 of it under the newest of ``AUDIT_DIGEST_KEYS`` (one key derived from SECRET_KEY
  when unset; the older keys still verify after a rotation).

Changing any of this breaks every existing chain: don't.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from .registry import DetailsRefused

__all__ = [
    "EVENT_FIELDS",
    "GENESIS",
    "canonical",
    "clean_details",
    "digest_hash",
    "digest_signature",
    "digest_signature_valid",
    "event_hash",
    "query_hash",
    "seal_hash",
    "subject_hash",
]

GENESIS = "0" * 64

# The event's values that its hash covers, in the order the sealer and the verifier select them.
EVENT_FIELDS = (
    "id",
    "at",
    "xid",
    "code",
    "actor_id",
    "actor_label",
    "conversation_id",
    "subject_hash",
    "details",
)

# The digest's values that its hash covers (its ``hash`` and ``signature`` are computed over them).
DIGEST_FIELDS = (
    "id",
    "sealed_at",
    "first_position",
    "last_position",
    "rows",
    "last_seal_hash",
    "frontier_xid",
    "frontier_event_id",
    "prev_hash",
)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def iso_utc(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("audit timestamps are aware datetimes")
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def _sha256(values: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    doc = {name: values[name] for name in fields}
    for name, value in doc.items():
        if isinstance(value, datetime):
            doc[name] = iso_utc(value)
    return hashlib.sha256(canonical(doc)).hexdigest()


def event_hash(row: Mapping[str, Any]) -> str:
    """The hash of one event row: ``row`` maps every name of ``EVENT_FIELDS`` to its value.
    ``details`` may be the jsonb text as the database driver returns it (Django reads jsonb as
    text): it is parsed, so the hash covers the value, not one serialisation of it."""
    details = row["details"]
    if isinstance(details, str):
        row = {**row, "details": json.loads(details)}
    return _sha256(row, EVENT_FIELDS)


def seal_hash(*, position: int, event_hash: str, prev_hash: str) -> str:
    return hashlib.sha256(
        canonical({"position": position, "event_hash": event_hash, "prev_hash": prev_hash})
    ).hexdigest()


def digest_hash(digest: Mapping[str, Any]) -> str:
    """The hash of one digest: ``digest`` maps every name of ``DIGEST_FIELDS`` to its value."""
    return _sha256(digest, DIGEST_FIELDS)


def digest_keys() -> list[bytes]:
    """The digest keys, newest first: the newest signs, any of them verifies (rotation). Default:
    one key derived from SECRET_KEY."""
    configured = [k for k in getattr(settings, "AUDIT_DIGEST_KEYS", []) if k]
    if configured:
        return [k.encode("utf-8") if isinstance(k, str) else bytes(k) for k in configured]
    return [
        hmac.new(
            settings.SECRET_KEY.encode("utf-8"), b"audit.digest_signature", hashlib.sha256
        ).digest()
    ]


def digest_signature(hash_: str, key: bytes | None = None) -> str:
    """HMAC-SHA256 of a digest's hash: only a holder of the key can sign a (re)written chain."""
    return hmac.new(key or digest_keys()[0], hash_.encode("ascii"), hashlib.sha256).hexdigest()


def digest_signature_valid(hash_: str, signature: str) -> bool:
    return any(
        hmac.compare_digest(digest_signature(hash_, key), signature) for key in digest_keys()
    )


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
