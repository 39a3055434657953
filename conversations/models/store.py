"""The conversation store.

A Conversation holds Messages in sequence; each Message keeps its raw text as first received,
encrypted with the conversation's data key (the verbatim store: what replay returns byte for
byte), and the Blocks projected from it (what human surfaces may show). An Exchange is one provider
call: its parameters, usage and flags, and the messages it brought. Deliberation (NEVER blocks)
exists only inside the encrypted raw text; a Block row of class NEVER or UNKNOWN holds its type and
nothing else. Data keys live in another database (``keystore.py``).

One piece: a conversation, its exchanges, messages, blocks and events refer to each other, and
the settings that shape them (queues, tokens, field policies, tool links) are read beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KT
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

from ..blocks import BlockClass
from ..projection.classes import STORAGE_CLASSES
from ..projection.project import PATH_RE

# Where a conversation stands (``workspace/status.py`` folds its events into one of these).
STATUS_CHOICES = [
    ("open", "open"),
    ("escalated", "escalated, awaiting a person"),
    ("resolved", "resolved"),
    ("abandoned", "abandoned"),
]


class Queue(models.Model):
    """A team's queue. Conversations belong to one (the exchange's ``labels.queue``); who sees a
    queue's conversations is a django-guardian object permission on it (``permissions.py``)."""

    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        permissions = [("see_queue", "See the conversations of this queue")]

    def __str__(self) -> str:
        return self.name


class QueueUserObjectPermission(UserObjectPermissionBase):
    """Direct foreign key (not generic): joins stay cheap on the list page."""

    content_object = models.ForeignKey(Queue, on_delete=models.CASCADE)


class QueueGroupObjectPermission(GroupObjectPermissionBase):
    content_object = models.ForeignKey(Queue, on_delete=models.CASCADE)


class Conversation(models.Model):
    external_id = models.CharField(max_length=200, unique=True)
    customer_external_id = models.CharField(max_length=200, db_index=True)
    queue = models.CharField(max_length=100, blank=True, db_index=True)
    labels = models.JSONField(default=dict, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    exchange_count = models.PositiveIntegerField(default=0)
    tool_call_count = models.PositiveIntegerField(default=0, db_default=0)
    # Any of its exchanges so flagged: kept here so the list filters and shows them without
    # scanning exchanges.
    any_truncated = models.BooleanField(default=False, db_default=False)
    any_refusal = models.BooleanField(default=False, db_default=False)
    any_rewritten = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(db_index=True)
    # Where the conversation stands, folded from its events (``workspace/status.py``) by
    # ``conversation_record_event``: kept here so the list shows and filters it without reading
    # events. ``status_at``: the event that set it (empty while open since the first exchange).
    status = models.CharField(
        max_length=20, choices=STATUS_CHOICES, default="open", db_default="open"
    )
    status_at = models.DateTimeField(null=True, blank=True)
    # What a support lead sorts and filters the list by (issue 35), kept by ingest like the
    # counters: the output tokens of every exchange, and the slowest model call's latency.
    output_tokens = models.BigIntegerField(default=0, db_default=0)
    slowest_ms = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        # The list's order. ``queue`` is included so that the list's narrow first query
        # (selectors.conversation_list: the page's ids, then its rows) reads no table row while
        # it skips conversations of other queues or without a match; the rare flags get partial
        # indexes of their own, so their filter starts at the first flagged row (bench/console.py
        # measures each on a million conversations).
        indexes = [
            models.Index(
                fields=["-last_activity_at", "-id"],
                include=["queue"],
                name="conv_activity_queue_idx",
            ),
            *(
                models.Index(
                    fields=["-last_activity_at", "-id"],
                    include=["queue"],
                    condition=Q(**{flag: True}),
                    name=f"conv_{flag.removeprefix('any_')}_idx",
                )
                for flag in ("any_truncated", "any_refusal", "any_rewritten")
            ),
            # The "escalated, awaiting a person" view: a short list read in activity order.
            models.Index(
                fields=["-last_activity_at", "-id"],
                name="conv_escalated_idx",
                condition=Q(status="escalated"),
            ),
            # Find: a ticket reference pasted into the search (``labels.ticket``).
            models.Index(KT("labels__ticket"), name="conv_ticket_idx"),
            # The list's other orders (selectors/listing.py, ``sort``): the same shape as the
            # activity's, so a page deep in them is an index range too (bench/console.py).
            models.Index(
                fields=["-output_tokens", "-id"], include=["queue"], name="conv_output_queue_idx"
            ),
            models.Index(
                fields=["-slowest_ms", "-id"], include=["queue"], name="conv_slowest_queue_idx"
            ),
        ]
        permissions = [
            ("view_restricted_fields", "See tool fields of the restricted storage class"),
            # Held per conversation (guardian) by a review grant. Declared here, not only in the
            # migration that introduced it, so that Django creates it again wherever the
            # permissions are rebuilt (a flush, a database restored without them).
            ("review_reasoning", "Read the reasoning of this conversation (review grant)"),
        ]

    def __str__(self) -> str:
        return f"conversation {self.pk}"


class Exchange(models.Model):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="exchanges"
    )
    ordinal = models.PositiveIntegerField(help_text="1 for the conversation's first exchange")
    settings_ciphertext = models.BinaryField(
        help_text="the request's settings (system prompt, tools...), encrypted with the "
        "conversation's data key"
    )
    format = models.CharField(max_length=40)
    streamed = models.BooleanField(default=False)
    started_at = models.DateTimeField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # When the exchange was watched live (conversations/live/): from its first chunk to its first
    # visible text, and how long the model thought. Null for one never seen live.
    live_first_text_ms = models.PositiveIntegerField(null=True, blank=True)
    live_thinking_ms = models.PositiveIntegerField(null=True, blank=True)
    requested_model = models.CharField(max_length=200, blank=True)
    response_model = models.CharField(max_length=200, blank=True)
    response_id = models.CharField(max_length=200, blank=True)
    thinking = models.CharField(max_length=40, blank=True)
    effort = models.CharField(max_length=40, blank=True)
    budget_tokens = models.PositiveIntegerField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_read_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_write_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    reasoning_tokens = models.PositiveIntegerField(null=True, blank=True)
    stop_reason = models.CharField(max_length=60, blank=True)
    server_tool_counts = models.JSONField(default=dict, blank=True)
    history_rewritten = models.BooleanField(default=False)
    rewritten_at = models.PositiveIntegerField(
        null=True, blank=True, help_text="first history position that differs from what was stored"
    )
    truncated = models.BooleanField(default=False)
    refusal = models.BooleanField(default=False)
    stream_error = models.CharField(max_length=100, blank=True)
    cancelled = models.BooleanField(
        default=False,
        db_default=False,
        help_text="the chat stopped reading the stream before its end: the stored answer is "
        "what had arrived",
    )
    unknown_chunks = models.JSONField(
        default=list,
        blank=True,
        help_text="stream chunk types the format does not know and read past (AI SDK UI): the "
        "stored message may lack what they carried (docs/formats.md)",
    )
    tool_call_count = models.PositiveIntegerField(default=0)
    # What the signals count (conversations/monitoring/): kept per exchange, so a rollup can be
    # recomputed from stored rows and an erasure subtracts exactly what the exchange added.
    rewrite_kind = models.CharField(
        max_length=30, blank=True, default="", db_default="", help_text="monitoring/rewrites.py"
    )
    repeated_tool_calls = models.PositiveIntegerField(default=0, db_default=0)
    tool_results = models.PositiveIntegerField(default=0, db_default=0)
    tool_errors = models.PositiveIntegerField(default=0, db_default=0)
    # The backend's conformance (DESIGN section 14; monitoring/rewrites.py): the cache reads a
    # rewrite the model sees cost (the previous call's cached prefix not read again), and the
    # provider's own verdict on the history (Anthropic ``input_transformations``: each entry's
    # type, path and reason; never content).
    cache_lost_tokens = models.PositiveIntegerField(null=True, blank=True)
    prefix_sha256 = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="of the settings before the history in the prompt (system, tools)",
    )
    input_transformations = models.JSONField(default=list, blank=True, db_default=[])
    # The reasoning tokens were estimated (the provider counts them inside output_tokens).
    reasoning_estimated = models.BooleanField(default=False, db_default=False)
    # The exchange's path through the conversation's messages (DESIGN section 20,
    # conversations/branches.py): the history it sent, as stored messages, then its answer. Kept
    # as a step from another exchange's path: the first ``path_kept`` messages of exchange
    # ``path_parent``'s path, then the messages numbered ``path_added``. ``branch`` (regenerated,
    # edited, restarted) when it left its parent's path at message ``branched_at`` (from 0).
    path_parent = models.PositiveIntegerField(
        null=True, blank=True, help_text="the ordinal of the exchange whose path this one follows"
    )
    path_kept = models.PositiveIntegerField(default=0, db_default=0)
    path_added = ArrayField(models.PositiveIntegerField(), default=list, blank=True, db_default=[])
    branch = models.CharField(max_length=20, blank=True, default="", db_default="")
    branched_at = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Not stored: the price table's row it is billed by (a ModelPrice or None), set by the
    # conversation page's selector (selectors.conversation_page, ``priced``) for the timing panel.
    price: Any = None

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "ordinal"], name="exchange_ordinal_uniq"
            )
        ]
        # The list's model and finish-reason filters (EXISTS per conversation): with the
        # conversation id in the index, each probe reads the index only.
        indexes = [
            models.Index(fields=["response_model", "conversation"], name="exchange_model_idx"),
            models.Index(fields=["stop_reason", "conversation"], name="exchange_stop_idx"),
        ]

    def __str__(self) -> str:
        return f"exchange {self.pk}"


class Message(models.Model):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    exchange = models.ForeignKey(
        Exchange,
        on_delete=models.CASCADE,
        related_name="messages",
        help_text="the exchange that first brought this message",
    )
    sequence = models.PositiveIntegerField()
    role = models.CharField(max_length=20)
    from_response = models.BooleanField(default=False)
    superseded = models.BooleanField(
        default=False,
        help_text="a later version of this message was received (AI SDK continuation): kept as "
        "received, no longer current",
    )
    raw_ciphertext = models.BinaryField(
        help_text="the message object exactly as first received, encrypted with the "
        "conversation's data key (crypto.py)"
    )
    sha256 = models.CharField(max_length=64, help_text="of the raw text, UTF-8")
    canonical_sha256 = models.CharField(
        max_length=64, help_text="of the parsed value, canonically serialised: matches resends"
    )
    alternate_sha256 = ArrayField(
        models.CharField(max_length=64),
        default=list,
        blank=True,
        help_text="canonical hashes of the provider's other byte forms of this message (a "
        "Responses item's output_item.done form), then their prompt hashes: a resend of one is "
        "unmodified",
    )
    prompt_sha256 = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="of what the model sees of it (the members the provider ignores left out)",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # Not stored: the message's blocks in position order, set by the conversation page's
    # selector (selectors.conversation_page) for the timeline.
    page_blocks: Sequence[Any] = ()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "sequence"], name="message_sequence_uniq"
            )
        ]
        ordering = ["conversation", "sequence"]

    def __str__(self) -> str:
        return f"message {self.conversation_id}#{self.sequence}"


class Block(models.Model):
    """A projection of one block: only what a human surface may show (DESIGN section 4)."""

    class Class(models.TextChoices):
        VISIBLE = BlockClass.VISIBLE.value, "visible"
        AUDIT = BlockClass.AUDIT.value, "audit"
        NEVER = BlockClass.NEVER.value, "never"
        UNKNOWN = BlockClass.UNKNOWN.value, "unknown"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="blocks")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    provider_type = models.CharField(max_length=100)
    block_class = models.CharField(max_length=10, choices=Class.choices)
    text = models.TextField(blank=True, help_text="VISIBLE: the visible text")
    tool_name = models.CharField(max_length=200, blank=True)
    call_id = models.CharField(max_length=200, blank=True)
    is_error = models.BooleanField(null=True)
    status = models.CharField(max_length=60, blank=True)
    fields = models.JSONField(
        default=dict,
        blank=True,
        help_text="AUDIT: projected input/result fields, by storage class (dropped ones absent)",
    )
    redacted = models.BooleanField(default=False, help_text="NEVER: withheld by the provider")
    # Full-text search over the visible (redacted) text; computed by PostgreSQL.
    search = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    # Not stored: what of ``fields`` the current viewer may see, set by selectors for a page
    # (projection.view_fields): the fields shown, and the paths shown as [not kept].
    shown: Sequence[Any] = ()
    hidden: Sequence[Any] = ()
    # Of ``hidden``, the kept fields this viewer's role may not see (projection.restricted_paths).
    restricted: Sequence[Any] = ()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message", "position"], name="block_position_uniq"),
            # Deliberation never reaches a projection: a NEVER/UNKNOWN row holds no content.
            models.CheckConstraint(
                condition=~Q(block_class__in=["never", "unknown"])
                | (Q(text="") & Q(tool_name="") & Q(call_id="") & Q(fields={})),
                name="block_never_is_empty",
            ),
        ]
        ordering = ["message", "position"]
        indexes = [
            GinIndex(fields=["search"], name="block_search_idx"),
            # Find: an identifier pasted into the search (an order id kept by an identifier
            # policy) is a containment query on the kept fields of tool blocks.
            GinIndex(
                fields=["fields"],
                name="block_fields_idx",
                opclasses=["jsonb_path_ops"],
                condition=Q(block_class="audit"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.block_class} {self.provider_type}"


class UnknownBlockType(models.Model):
    """Block types the code has not classified: treated as NEVER, listed for admins."""

    format = models.CharField(max_length=40)
    provider_type = models.CharField(max_length=100)
    seen_count = models.PositiveIntegerField(default=0)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["format", "provider_type"], name="unknown_type_uniq")
        ]
        ordering = ["format", "provider_type"]

    def __str__(self) -> str:
        return f"{self.format} {self.provider_type}"


class ConversationEvent(models.Model):
    """What the customer did next (the events API)."""

    class Type(models.TextChoices):
        USER_REPLIED = "user_replied"
        RATED = "rated"
        ESCALATED = "escalated"
        ABANDONED = "abandoned"
        RESOLVED = "resolved"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=20, choices=Type.choices)
    at = models.DateTimeField()
    value = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "at", "id"]

    def __str__(self) -> str:
        return f"{self.type} on {self.conversation_id}"


class ServiceToken(models.Model):
    """A credential for a system calling the API. Only the SHA-256 of the token is kept. Its
    scope says which endpoints it opens: the chat backend's (exchanges, replay, events), a
    ticketing system's (deletion requests and legal holds), a monitoring system's (/metrics) or
    an identity provider's (SCIM provisioning at /scim/v2/), never two of them."""

    class Scope(models.TextChoices):
        INGEST = "ingest", "chat backend: exchanges, replay, events"
        COMPLIANCE = "compliance", "ticketing system: deletion requests, legal holds"
        METRICS = "metrics", "monitoring: /metrics"
        SCIM = "scim", "identity provider: SCIM provisioning of people and groups"

    name = models.CharField(max_length=100, unique=True)
    scope = models.CharField(max_length=20, choices=Scope.choices, default=Scope.INGEST)
    prefix = models.CharField(max_length=12, help_text="the first characters, to tell tokens apart")
    token_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    # DRF's IsAuthenticated asks the authenticated principal this.
    @property
    def is_authenticated(self) -> bool:
        return self.revoked_at is None


class IdempotencyKey(models.Model):
    """The first result of a request sent with an Idempotency-Key, returned again on retry."""

    token = models.ForeignKey(ServiceToken, on_delete=models.CASCADE)
    key = models.CharField(max_length=200)
    request_sha256 = models.CharField(max_length=64)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, null=True)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["token", "key"], name="idempotency_uniq")]

    def __str__(self) -> str:
        return self.key


class FieldPolicy(models.Model):
    """How one field of a tool's input or result is kept and shown (DESIGN section 4).

    Addressed by tool name (``*``: any), block type (``*``: any), side and JSON path. Changing
    policies re-projects existing conversations (``tasks.reproject``), so policy applies to old
    data too.
    """

    # The one definition of the classes is the projection's (projection/classes.py); Django's
    # functional API builds the same choices from it (django-stubs types only the class form).
    StorageClass = models.TextChoices("StorageClass", STORAGE_CLASSES)  # type: ignore[call-overload]

    class Side(models.TextChoices):
        INPUT = "input", "tool input"
        OUTPUT = "output", "tool result"

    tool_name = models.CharField(max_length=200, default="*", help_text="a tool name, or * for any")
    block_type = models.CharField(
        max_length=100, default="*", help_text="a provider block type (tool_use...), or * for any"
    )
    side = models.CharField(max_length=10, choices=Side.choices)
    path = models.CharField(
        max_length=300, help_text="JSON path, [*] for array items: $.customer.email, $.items[*].sku"
    )
    storage_class = models.CharField(max_length=20, choices=StorageClass.choices)
    note = models.CharField(max_length=300, blank=True, help_text="why this field is kept so")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tool_name", "block_type", "side", "path"], name="field_policy_uniq"
            )
        ]
        ordering = ["tool_name", "side", "path"]
        verbose_name_plural = "field policies"

    def __str__(self) -> str:
        return f"{self.tool_name} {self.side} {self.path}: {self.storage_class}"

    def clean(self) -> None:
        if not PATH_RE.match(self.path):
            raise ValidationError(
                {"path": "a JSON path of keys and [*]: $, $.customer.email, $.items[*].sku"}
            )


class ToolLink(models.Model):
    """A link from a tool's identifiers to the source system's record, so the console links to
    the record instead of keeping its payload."""

    tool_name = models.CharField(max_length=200, unique=True)
    url_template = models.CharField(
        max_length=500,
        help_text="one {placeholder} named as the identifier's key, e.g. "
        "https://orders.example.com/orders/{order_id}",
    )

    def __str__(self) -> str:
        return self.tool_name


class ReprojectionJob(models.Model):
    """A re-projection of every stored conversation under the policies in force, run by Celery;
    its progress is shown in the admin."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    reason = models.CharField(max_length=300)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    last_conversation_id = models.BigIntegerField(default=0, help_text="resume point")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"re-projection {self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, self.done * 100 // self.total)
