"""The one search box: whatever an agent pastes, looked up as what it most likely is.

In this order, among the conversations the agent may see:

1. the chat backend's conversation id (``Conversation.external_id``): straight to it;
2. a ticket reference (``labels.ticket``): straight to its conversation when only one has it,
   else the list of those that do;
3. a customer id: the customer's conversations;
4. an identifier a policy keeps (an order id under ``order_id``, or under any field an
   ``identifier`` policy names): the conversations whose tool calls carry it;
5. otherwise, words of the visible (redacted) text: full-text search.

Steps 1-4 are one query (a UNION of four index lookups, two rows each at most); the list then
narrows by what matched. Every lookup is exact: what the backend stored, as pasted (surrounding
white space aside). ``match`` lets the agent take the query as something else ("search the
words instead").

To add a kind of identifier: a probe in ``_probes`` (an indexed lookup), a value in ``KINDS``
and how ``ListFilters`` narrows by it (``narrow``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db.models import Q, QuerySet, Value
from django.db.models.fields.json import KT

from ..models import Block, Conversation

CONVERSATION = "conversation"
TICKET = "ticket"
CUSTOMER = "customer"
IDENTIFIER = "identifier"
WORDS = "words"
KINDS = (CONVERSATION, TICKET, CUSTOMER, IDENTIFIER, WORDS)
KIND_LABELS = {
    CONVERSATION: "conversation id",
    TICKET: "ticket reference",
    CUSTOMER: "customer id",
    IDENTIFIER: "identifier in a tool call",
    WORDS: "words of the conversation",
}
TICKET_LABEL = "ticket"  # the exchange label naming the ticket (indexed: conv_ticket_idx)


@dataclass(frozen=True)
class Found:
    """What the query was taken as; ``conversation``: the one conversation to go straight to;
    ``also``: the other kinds it matched, offered as alternatives."""

    kind: str
    conversation: int | None = None
    also: tuple[str, ...] = ()


def identifier_filter(value: str) -> Q:
    """Blocks keeping ``value`` as an identifier (a number pasted as digits matches a number
    kept as one). Served by the partial GIN index ``block_fields_idx``."""
    wanted: list[Any] = [value]
    if value.isdigit() and len(value) < 19:
        wanted.append(int(value))
    q = Q()
    for v in wanted:
        q |= Q(fields__contains={"kept": [{"class": "identifier", "value": v}]})
    return Q(block_class="audit") & q


def _probes(visible: QuerySet[Conversation], q: str) -> Any:
    def probe(qs: QuerySet[Conversation], kind: str) -> Any:
        return qs.annotate(kind=Value(kind)).values_list("kind", "pk")[:2]

    identifier = Block.objects.filter(identifier_filter(q)).values("conversation_id")
    return probe(visible.filter(external_id=q), CONVERSATION).union(
        probe(visible.annotate(ticket=KT(f"labels__{TICKET_LABEL}")).filter(ticket=q), TICKET),
        probe(visible.filter(customer_external_id=q), CUSTOMER),
        probe(visible.filter(pk__in=identifier), IDENTIFIER),
        all=True,
    )


def resolve(visible: QuerySet[Conversation], q: str, *, match: str = "") -> Found:
    """What ``q`` names among ``visible``: one query (none when ``match`` says words)."""
    if match == WORDS or not q:
        return Found(WORDS)
    hits: dict[str, list[int]] = {}
    for kind, pk in _probes(visible, q):
        hits.setdefault(kind, []).append(pk)
    found = [k for k in KINDS if k in hits] + [WORDS]
    kind = match if match in found else found[0]
    one = hits.get(kind, [])
    go = one[0] if kind in (CONVERSATION, TICKET) and len(one) == 1 else None
    return Found(kind, go, tuple(k for k in found if k != kind))


def narrowed(filters: Any, found: Found, q: str) -> Any:
    """The list's filters narrowed by what ``q`` was taken as (``ListFilters``)."""
    if found.kind == WORDS:
        return replace(filters, q=q)
    field = {
        CONVERSATION: "conversation",
        TICKET: "ticket",
        CUSTOMER: "customer",
        IDENTIFIER: "identifier",
    }[found.kind]
    return replace(filters, q="", **{field: q})


@dataclass(frozen=True)
class Ticket:
    reference: str
    url: str | None


def ticket_of(labels: Any) -> Ticket | None:
    """The conversation's ticket (``labels.ticket``), linked through ``TICKET_URL_TEMPLATE``
    (``https://support.example.com/tickets/{ticket}``; the reference is URL-quoted)."""
    if not isinstance(labels, dict):
        return None
    value = labels.get(TICKET_LABEL)
    if not isinstance(value, (str, int)) or isinstance(value, bool) or value == "":
        return None
    reference = str(value)
    template = getattr(settings, "TICKET_URL_TEMPLATE", "")
    linkable = "{ticket}" in template and template.startswith(("https://", "http://"))
    url = template.replace("{ticket}", quote(reference, safe="")) if linkable else None
    return Ticket(reference, url)
