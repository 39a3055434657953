"""The conversations app's tables, a module per room (Django reads them from this package).

- ``store.py``: the conversation store (queues, conversations, exchanges, messages with their
  encrypted verbatim text, blocks, events) and the settings that shape it (service tokens, field
  policies, tool links, re-projection jobs);
- ``keystore.py``: the data keys, in their own database;
- ``reviews.py``: review grants, their object permissions, alerts and access requests;
- ``sharing.py``: share links and work notes;
- ``monitoring.py``: the signals' rollups, alert rules, alerts, notifications, prices, probes.

Import from the package (``from conversations.models import Conversation``). The modules import
nothing of the rooms above them: the rules they are built from (block classes, storage classes,
the signals' buckets, finishes and destinations) sit below, in the layers of ``pyproject.toml``.
"""

from .keystore import DataKey
from .monitoring import (
    Alert,
    AlertEvent,
    AlertRule,
    AllowanceProbe,
    ModelPrice,
    Notification,
    Rollup,
)
from .reviews import (
    ConversationGroupObjectPermission,
    ConversationUserObjectPermission,
    ReviewAccessRequest,
    ReviewAlert,
    ReviewGrant,
)
from .sharing import ShareLink, WorkNote
from .store import (
    STATUS_CHOICES,
    Block,
    Conversation,
    ConversationEvent,
    Exchange,
    FieldPolicy,
    IdempotencyKey,
    Message,
    Queue,
    QueueGroupObjectPermission,
    QueueUserObjectPermission,
    ReprojectionJob,
    ServiceToken,
    ToolLink,
    UnknownBlockType,
)

__all__ = [
    "STATUS_CHOICES",
    "Alert",
    "AlertEvent",
    "AlertRule",
    "AllowanceProbe",
    "Block",
    "Conversation",
    "ConversationEvent",
    "ConversationGroupObjectPermission",
    "ConversationUserObjectPermission",
    "DataKey",
    "Exchange",
    "FieldPolicy",
    "IdempotencyKey",
    "Message",
    "ModelPrice",
    "Notification",
    "Queue",
    "QueueGroupObjectPermission",
    "QueueUserObjectPermission",
    "ReprojectionJob",
    "ReviewAccessRequest",
    "ReviewAlert",
    "ReviewGrant",
    "Rollup",
    "ServiceToken",
    "ShareLink",
    "ToolLink",
    "UnknownBlockType",
    "WorkNote",
]
