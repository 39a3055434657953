"""What ingest's matching stage knows of a conversation (pure, no database): the hashes a
stored message is matched by, the plan of one exchange, and the conversation's state as the
batch's exchanges are planned (its messages by sequence number, its exchanges' paths as a
``branches.Tree``). ``store.lock_conversations`` fills it from the rows; ``history.plan_batch``
plans each exchange against it and adds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from ..blocks import Message
from ..branches import Node, Tree, common_prefix


class Hashes(NamedTuple):
    """What a stored message is matched by: its raw and canonical hashes, the canonical and
    prompt hashes of the other byte forms the provider sent for it (``Message.alternates``: a
    history sending one back is unmodified), and the hash of what the model sees of it
    (``prompt_sha256``: "" for a message stored before it was kept)."""

    raw: str
    canonical: str
    alternates: tuple[str, ...] = ()
    prompt: str = ""


@dataclass(slots=True)
class PlannedMessage:
    message: Message
    sha256: str
    canonical_sha256: str
    from_response: bool
    superseded: bool = False
    alternate_sha256: tuple[str, ...] = ()
    prompt_sha256: str = ""
    format: str = ""  # the format of the exchange that brought it
    sequence: int = -1  # given when its exchange is added to the conversation

    @property
    def hashes(self) -> Hashes:
        return Hashes(self.sha256, self.canonical_sha256, self.alternate_sha256, self.prompt_sha256)


# A position of a path being planned: a stored message's sequence number, or a new message.
Ref = int | PlannedMessage


@dataclass(slots=True)
class ExchangePlan:
    new_messages: list[PlannedMessage]
    rewritten_at: int | None
    tool_call_count: int
    # For the signals (conversations/monitoring/): how the history was rewritten (``rewrites.py``;
    # "reserialised" and "unseen" when only what the model does not see differs, decided here;
    # the other kinds by ``monitoring.rollups.rewrites_classify`` once the stored messages can
    # be read), and the messages of the path it continues from the rewritten position on (row
    # ids, or plans of this batch).
    rewrite_kind: str = ""
    rewritten_rows: list[int | PlannedMessage] = field(default_factory=list)
    repeated_tool_calls: int = 0
    tool_results: int = 0
    tool_errors: int = 0
    # What the model sees before the history (system, tools: ``Profile.prefix_settings``), and
    # the cache reads a change the model sees cost (``rewrites.cache_lost``).
    prefix_sha256: str = ""
    cache_lost_tokens: int | None = None
    # The path (``branches.py``): the exchange whose path it continues or leaves (its
    # ordinal), its own path as planned (the history's messages, less the one the answer
    # supersedes, then the answer), and the branch it starts, if any, with where.
    parent: int | None = None
    path: list[Ref] = field(default_factory=list)
    branch: str = ""
    branched_at: int | None = None
    superseded_rows: list[int] = field(default_factory=list)  # stored rows it supersedes
    node: Node | None = None  # set when the exchange is added to its conversation


@dataclass(slots=True)
class StoredMessage:
    """A message the conversation holds (stored before the batch, or planned in it)."""

    hashes: Hashes
    role: str
    from_response: bool
    format: str  # of the exchange that brought it
    row: int | PlannedMessage  # its row id, or its plan when it arrives in this batch


@dataclass(slots=True)
class ExchangeMeta:
    """What conformance compares a request with, of the exchange whose path it continues."""

    format: str
    prefix: str = ""
    cached: int | None = None  # cached tokens it read or wrote (None: none reported)
    response_id: str = ""


@dataclass(slots=True)
class ConversationState:
    """What matching needs of one conversation, kept up to date as the batch is planned."""

    pk: int
    customer: str
    exchanges_before: int = 0  # exchanges stored before this batch
    queue: str = ""
    count: int = 0  # messages stored: the next sequence number
    messages: dict[int, StoredMessage] = field(default_factory=dict)  # by sequence number
    tree: Tree = field(default_factory=Tree)
    meta: dict[int, ExchangeMeta] = field(default_factory=dict)  # by exchange ordinal
    messages_added: int = 0  # added by this batch
    exchanges: int = 0  # added by this batch
    tool_calls: int = 0  # added by this batch
    output_tokens: int = 0  # added by this batch
    slowest_ms: int = 0  # the slowest model call of this batch
    activity: datetime | None = None  # the latest started_at of this batch's exchanges
    truncated: bool = False  # any exchange of this batch was so flagged
    refusal: bool = False
    rewritten: bool = False

    def stored(
        self, sequence: int, row_id: int, hashes: Hashes, role: str, from_response: bool, fmt: str
    ) -> None:
        """One message stored before this batch, and its exchange's format."""
        self.count = max(self.count, sequence + 1)
        self.messages[sequence] = StoredMessage(hashes, role, from_response, fmt, row_id)

    def exchange(self, node: Node, meta: ExchangeMeta) -> None:
        """One exchange stored before this batch (in ordinal order)."""
        self.tree.add(node)
        self.meta[node.ordinal] = meta

    def add(self, plan: ExchangePlan, fmt: str, ordinal: int, meta: ExchangeMeta) -> int:
        """An exchange of the batch (in format ``fmt``): its new messages numbered, its path
        added to the tree. Returns the sequence number of its first new message."""
        first = self.count
        for j, pm in enumerate(plan.new_messages):
            pm.sequence = first + j
            self.messages[pm.sequence] = StoredMessage(
                pm.hashes, pm.message.role, pm.from_response, fmt, pm
            )
        self.count += len(plan.new_messages)
        self.messages_added += len(plan.new_messages)
        self.exchanges += 1
        path = [r if isinstance(r, int) else r.sequence for r in plan.path]
        parent = () if plan.parent is None else self.tree.path(plan.parent)
        kept = common_prefix(path, parent)
        plan.node = Node(ordinal, plan.parent, kept, tuple(path[kept:]), plan.branch,
                         plan.branched_at)  # fmt: skip
        self.tree.add(plan.node)
        self.meta[ordinal] = meta
        return first

    def model_wrote(self, sequence: int) -> bool:
        """The stored message is the model's (an answer, or an assistant message sent)."""
        found = self.messages[sequence]
        return found.from_response or found.role == "assistant"
