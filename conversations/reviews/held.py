"""The reasoning a conversation holds, for subject access (``retention/access/``): measured
without its text, or, for a package compliance asked for with a recorded purpose, its text.

Both read the stored messages only (never the provider: a subject access package is what the
console holds) and go through ``reasoning.reasoning_of``, the one way to deliberation, which is why
they live in this package. ``reasoning_held`` returns kinds and byte counts, never text: the
subject access report and the exposure map show them. ``reasoning_texts`` returns the text,
redacted by the one pipeline, and is called only by ``retention.access`` when compliance asks for
it with a purpose that the audit row of the same read records.

Kinds, in the words of the report: ``raw`` (thinking or reasoning text as the model produced it),
``summary`` (a summary the provider wrote of it), ``encrypted`` (the provider returned it only
encrypted or signed, with no readable text: OpenAI ``encrypted_content``, an empty thinking block
with a signature) and ``redacted`` (the provider withheld it: ``redacted_thinking``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.views.decorators.debug import sensitive_variables

from ..keystore.keys import KeyDestroyed, data_keys_for, decrypt_message
from ..keystore.routers import KEYS_DB
from ..models import Block, DataKey, Message
from ..projection.redaction import redact
from .reasoning import Trace, TraceKind, Withheld, reasoning_of

KINDS = ("raw", "summary", "encrypted", "redacted")
Ids = Sequence[int] | QuerySet[Any]


def kind_of(trace: Trace) -> str:
    if trace.withheld is Withheld.REDACTED:
        return "redacted"
    if trace.withheld is not Withheld.NO or not trace.text:
        return "encrypted"
    return "summary" if trace.kind is TraceKind.SUMMARY else "raw"


@dataclass(frozen=True)
class HeldTrace:
    conversation_id: int
    exchange_ordinal: int
    kind: str  # one of KINDS
    bytes: int  # UTF-8 bytes of its text as stored (0 when there is none)
    text: str = ""  # empty unless asked for (``reasoning_texts``), redacted


def _keys(ids: set[int]) -> dict[int, bytes]:
    try:
        return data_keys_for(ids)
    except KeyDestroyed:  # some were erased meanwhile: read those still held
        held = DataKey.objects.using(KEYS_DB).filter(conversation_id__in=sorted(ids))
        present = set(held.values_list("conversation_id", flat=True))
        return data_keys_for(present) if present else {}


@sensitive_variables()
def _traces(conversation_ids: Ids, *, with_text: bool) -> list[HeldTrace]:
    """Decrypt the current messages that carry a NEVER block (one query for them, one for their
    keys) and read their reasoning. ``conversation_ids``: ids, or a queryset of them (a
    subquery: one parameter however many)."""
    ids = conversation_ids if isinstance(conversation_ids, QuerySet) else list(conversation_ids)
    carrying = Block.objects.filter(conversation_id__in=ids, block_class=Block.Class.NEVER).values(
        "message_id"
    )
    rows = list(
        Message.objects.filter(conversation_id__in=ids, superseded=False, pk__in=carrying)
        .order_by("conversation_id", "sequence")
        .values_list(
            "conversation_id", "sequence", "raw_ciphertext", "exchange__format", "exchange__ordinal"
        )
    )
    if not rows:
        return []
    keys = _keys({row[0] for row in rows})
    out: list[HeldTrace] = []
    for conversation_id, sequence, sealed, fmt, ordinal in rows:
        key = keys.get(conversation_id)
        if key is None:  # its key is gone: the messages are unreadable everywhere
            continue
        raw = decrypt_message(key, conversation_id, sequence, bytes(sealed))
        for trace in reasoning_of(fmt, raw):
            size = len(trace.text.encode("utf-8")) if trace.text else 0
            text = redact(trace.text) if with_text and trace.text else ""
            out.append(HeldTrace(conversation_id, ordinal, kind_of(trace), size, text))
    return out


def reasoning_held(conversation_ids: Ids) -> list[HeldTrace]:
    """Every piece of reasoning the conversations hold, by kind and size, without its text."""
    return _traces(conversation_ids, with_text=False)


def reasoning_texts(conversation_ids: Ids) -> list[HeldTrace]:
    """The same with the text, redacted. Only for a subject access package that compliance asked
    for with a purpose, recorded by the caller in the audit row of the same read."""
    return _traces(conversation_ids, with_text=True)
