"""The audit event types: one place, stable codes.

Every row of the audit log carries the ``code`` of one of the types below, and ``record()``
refuses any other code and any detail key its type does not declare. The codes are written
into rows that are kept forever and chained by hash, so a code is never renamed, reused or
removed: retire a type by saying so in its description.

To add an event type:
1. Add an ``EventType`` to ``EVENT_TYPES`` below: a code ``<subject>.<past-tense verb>``, one line
   saying what happened, and the detail keys it may carry (``required`` for those it must).
2. Details are small structured facts (ids, counts, hashes, short labels). Never an external id
   (a chat backend conversation id or customer id: pass the customer as ``subject=`` and it is
   stored as a keyed hash; pass a search query through ``query_hash()``), never message text,
   never reasoning (DESIGN.md invariants 3 and 6).
3. Call ``audit.record("<code>", actor=..., conversation_id=..., subject=..., key=value)`` inside
   the transaction of the action it records, and assert the row in that action's tests.
4. Add the code to the pinned list in ``tests/audit/test_registry.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "EVENT_TYPES",
    "AuditError",
    "DetailsRefused",
    "EventType",
    "UnknownEventType",
    "event_type",
]

CODE_RE = re.compile(r"^[a-z][a-z_]*\.[a-z][a-z_]*$")


class AuditError(Exception):
    """An audit row that cannot be written as asked."""


class UnknownEventType(AuditError, LookupError):
    pass


class DetailsRefused(AuditError, ValueError):
    pass


@dataclass(frozen=True)
class EventType:
    code: str
    description: str
    details: frozenset[str] = frozenset()
    required: frozenset[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        if not CODE_RE.match(self.code):
            raise ValueError(f"audit event code {self.code!r} is not <subject>.<verb>")
        if not self.required <= self.details:
            raise ValueError(f"{self.code}: required detail keys must also be declared")


def _types(*types: EventType) -> MappingProxyType[str, EventType]:
    by_code: dict[str, EventType] = {}
    for t in types:
        if t.code in by_code:
            raise ValueError(f"audit event code {t.code!r} declared twice")
        by_code[t.code] = t
    return MappingProxyType(by_code)


def _keys(*names: str) -> frozenset[str]:
    return frozenset(names)


EVENT_TYPES = _types(
    # Human reads of a conversation (invariant 6: who, what, when, which page).
    EventType(
        "conversation.viewed",
        "a person opened a page showing one conversation (transcript, tool trail, export, admin)",
        _keys("page", "purpose", "format"),
        required=_keys("page"),
    ),
    EventType(
        "conversation.searched",
        "a person searched conversations; the query is kept only as a keyed hash",
        # match: what the query was taken as (conversation id, ticket, customer, identifier,
        # words), never the query itself
        _keys("query_hash", "filters", "results", "page", "match"),
    ),
    EventType(
        "conversation.listed",
        "a person listed conversations (the list page, a queue), without a search query",
        _keys("filters", "results", "page"),
    ),
    # Configuration.
    EventType(
        "policy.changed",
        "an admin saved or deleted a field storage policy (re-projection follows)",
        _keys("change", "policy", "job"),
        required=_keys("change"),
    ),
    EventType(
        "grant.created",
        "a reviewer was granted the reasoning review of one conversation",
        _keys("grant", "grantee", "purpose", "expires_at"),
    ),
    EventType(
        "grant.revoked",
        "a review grant was revoked before it expired",
        _keys("grant", "grantee", "reason"),
    ),
    EventType(
        "queue.granted",
        "a user or a group may now see the conversations of a queue",
        _keys("queue", "user", "group"),
        required=_keys("queue"),
    ),
    EventType(
        "queue.revoked",
        "a user or a group may no longer see the conversations of a queue",
        _keys("queue", "user", "group"),
        required=_keys("queue"),
    ),
    EventType(
        "queue.created",
        "an admin created a queue (its name is fixed from then on)",
        _keys("queue"),
        required=_keys("queue"),
    ),
    EventType(
        "token.created",
        "a service token was created (for the chat backend or a ticketing system)",
        _keys("token", "name", "scope"),
        required=_keys("token"),
    ),
    EventType(
        "token.changed",
        "an admin renamed a service token or changed its scope",
        _keys("token", "fields", "scope"),
        required=_keys("token", "fields"),
    ),
    EventType(
        "token.revoked",
        "a service token was revoked: requests carrying it are refused from now on",
        _keys("token"),
        required=_keys("token"),
    ),
    EventType(
        "tool_link.changed",
        "an admin saved or deleted a tool's link to its source system",
        _keys("change", "tool", "link"),
        required=_keys("change", "tool"),
    ),
    EventType(
        "retention_class.changed",
        "an admin saved or deleted a retention class (how long conversations are kept)",
        _keys("change", "retention_class", "queue", "days"),
        required=_keys("change"),
    ),
    # Operational signals (conversations/monitoring/).
    EventType(
        "signals.viewed",
        "a person read a signals page (a model page, alerts, an alert, the readiness report)",
        _keys("page", "queue", "snapshot", "alert", "conversations", "rows"),
        required=_keys("page"),
    ),
    EventType(
        "alert_rule.changed",
        "an admin saved or deleted an alert rule (what is watched, where, the threshold)",
        _keys("change", "rule", "metric", "muted", "enabled"),
        required=_keys("change", "rule"),
    ),
    EventType(
        "model_price.changed",
        "an admin saved or deleted a model's price per token kind",
        _keys("change", "price", "model"),
        required=_keys("change", "model"),
    ),
    # The review page: the only human read of reasoning, always with its purpose.
    EventType(
        "review.read",
        "a reviewer read a conversation's reasoning summary under a grant, with a purpose",
        _keys("purpose", "reference", "exchanges", "content_hash", "grant"),
        required=_keys("purpose"),
    ),
    # Retention and deletion.
    EventType(
        "deletion.requested",
        "compliance staff submitted a deletion request",
        _keys("request", "scope", "conversations", "reason", "due", "reference"),
    ),
    EventType(
        "deletion.viewed",
        "compliance staff (or a ticketing system) read deletion requests, receipts or holds",
        _keys("page", "request", "results", "filters", "format"),
        required=_keys("page"),
    ),
    EventType(
        "deletion.previewed",
        "compliance staff (or a ticketing system) counted what a deletion request would erase",
        _keys("scope", "conversations", "rows", "holds", "unknown"),
    ),
    EventType(
        "deletion.executed",
        "a deletion request was carried out by the one erase path",
        _keys("request", "conversations", "rows", "keys_destroyed", "receipt_hash"),
    ),
    EventType(
        "deletion.blocked",
        "a deletion request (or a retention erase) was blocked by a legal hold",
        _keys("request", "hold", "conversations"),
    ),
    EventType(
        "legal_hold.placed",
        "compliance staff placed a legal hold",
        _keys("hold", "reason", "conversations"),
    ),
    EventType(
        "legal_hold.released",
        "compliance staff released a legal hold",
        _keys("hold", "reason"),
    ),
    EventType(
        "exchange.refused_tombstoned",
        "the chat backend posted an exchange for a deleted conversation or customer (410)",
        _keys("tombstone", "conversation_hash"),
    ),
    EventType(
        "restore.reconciled",
        "after a restore from backups, the conversations erased since the main backup was taken "
        "(their data keys absent from the keys backup) were erased again",
        _keys("conversations", "rows"),
    ),
    EventType(
        "retention.swept",
        "the retention clock erased conversations whose retention had expired",
        _keys("conversations", "requests", "blocked", "duration_ms"),
    ),
    # Reading the log is itself logged.
    EventType(
        "audit.viewed",
        "compliance staff browsed (or exported) the audit log",
        _keys("page", "filters", "query_hash", "results", "format"),
    ),
    # What leaves the console (conversations/sharing/): share links and work notes.
    EventType(
        "share_link.created",
        "a person made a read-only link to a conversation's transcript up to that moment",
        _keys("link", "days", "expires_at"),
        required=_keys("link"),
    ),
    EventType(
        "share_link.revoked",
        "a share link was revoked before it expired (reason: when the system revoked it, e.g. "
        "its creator lost their access)",
        _keys("link", "reason"),
        required=_keys("link"),
    ),
    EventType(
        "share_link.opened",
        "someone opened a share link (the link is the actor); outcome: shown, expired, revoked, "
        "withdrawn (its creator can no longer open the conversation) or erased",
        _keys("link", "outcome"),
        required=_keys("outcome"),
    ),
    EventType(
        "work_note.changed",
        "an admin saved or deleted a tool's work note template",
        _keys("change", "tool", "note"),
        required=_keys("change"),
    ),
    # People: who may enter (console/people/). One row per change, whatever its channel (the
    # People page, a sign-in through the identity provider, a SCIM request); ``person`` is the
    # user's id, ``via`` the channel (page, sign-in, scim).
    EventType(
        "person.invited",
        "an admin created a local account (password set by the invitee through a one-time link)",
        _keys("person", "roles", "via"),
        required=_keys("person"),
    ),
    EventType(
        "person.provisioned",
        "an account was created by the identity provider: at a first sign-in, or through SCIM",
        _keys("person", "source", "roles", "via"),
        required=_keys("person", "via"),
    ),
    EventType(
        "person.updated",
        "the identity provider changed an account's attributes through SCIM (names, e-mail, "
        "user name, active); roles that follow from it are listed",
        _keys("person", "fields", "roles", "active", "sessions_ended", "via"),
        required=_keys("person", "fields"),
    ),
    EventType(
        "person.roles_changed",
        "a person's roles changed: set by an admin, or re-read from the identity provider's "
        "groups at sign-in",
        _keys("person", "roles", "previous", "via"),
        required=_keys("person", "roles"),
    ),
    EventType(
        "person.deactivated",
        "an account was deactivated (on the People page or through SCIM): every session it held "
        "ended at once, and it cannot sign in",
        _keys("person", "sessions_ended", "reason", "via"),
        required=_keys("person"),
    ),
    EventType(
        "person.reactivated",
        "a deactivated account may sign in again",
        _keys("person", "via"),
        required=_keys("person"),
    ),
    EventType(
        "person.deleted",
        "the identity provider deleted an account through SCIM: deactivated, sessions ended, "
        "hidden from SCIM, never to sign in again",
        _keys("person", "sessions_ended", "via"),
        required=_keys("person"),
    ),
    EventType(
        "directory_group.changed",
        "the identity provider created, changed or deleted a group through SCIM; the members "
        "whose roles changed with it are listed",
        _keys("change", "group", "fields", "members", "roles_changed", "via"),
        required=_keys("change", "group"),
    ),
    # A person's own display settings (console/preferences.py).
    EventType(
        "preference.changed",
        "a person changed a display setting of their own (the time zone their pages use)",
        _keys("preference", "value"),
        required=_keys("preference"),
    ),
    # Subject access (retention/access/): what is held about a customer, who read it, who may.
    EventType(
        "subject_access.reported",
        "compliance staff (or the subject_access command) read the subject access report of a "
        "customer or one conversation, for a stated purpose; reasoning: its text was included "
        "in the package",
        _keys("purpose", "format", "scope", "conversations", "reasoning", "package"),
        required=_keys("purpose", "scope"),
    ),
)


def event_type(code: str) -> EventType:
    try:
        return EVENT_TYPES[code]
    except KeyError:
        raise UnknownEventType(
            f"unknown audit event type {code!r}: declare it in audit/registry.py"
        ) from None


def check_details(t: EventType, keys: Iterable[str]) -> None:
    given = frozenset(keys)
    undeclared = given - t.details
    if undeclared:
        raise DetailsRefused(
            f"{t.code} does not declare the detail key(s) {sorted(undeclared)}: "
            f"declared are {sorted(t.details)}"
        )
    missing = t.required - given
    if missing:
        raise DetailsRefused(f"{t.code} requires the detail key(s) {sorted(missing)}")
