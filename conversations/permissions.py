"""Who sees which conversations.

- Admins (superusers and the ``admin`` group) see every queue.
- Support agents and reviewers see the queues granted to them or to one of their groups: a
  django-guardian object permission ``see_queue`` on the Queue (direct foreign-key permission
  models, ``QueueUserObjectPermission`` / ``QueueGroupObjectPermission``).
- Compliance staff read the audit log and run deletions; they do not read transcripts.
- Anyone else, inactive users included, sees nothing.

``access_conversation`` returns a conversation the user may see or raises Http404: a forbidden
conversation and a missing one look the same (DESIGN invariant 8).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from guardian.shortcuts import get_objects_for_user

from .models import Conversation, Queue

SEE_QUEUE = "conversations.see_queue"
ADMIN_GROUP = "admin"
READER_GROUPS = frozenset({"support_agent", "reviewer"})


def _groups(user: Any) -> set[str]:
    cached = getattr(user, "_console_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._console_groups = cached
    return cached


def is_console_admin(user: Any) -> bool:
    return bool(user.is_active and (user.is_superuser or ADMIN_GROUP in _groups(user)))


COMPLIANCE_GROUP = "compliance"


def is_compliance(user: Any) -> bool:
    """Compliance staff (or a console admin): the audit log, deletion requests, legal holds,
    review grants."""
    if not user.is_authenticated or not user.is_active:
        return False
    return is_console_admin(user) or COMPLIANCE_GROUP in _groups(user)


def can_read_conversations(user: Any) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return is_console_admin(user) or bool(READER_GROUPS & _groups(user))


def require_reader(user: Any) -> None:
    """404 for anyone who may read no conversation at all."""
    if not can_read_conversations(user):
        raise Http404("no such page")


def require_compliance(user: Any) -> None:
    """404 for anyone but compliance staff and console admins."""
    if not is_compliance(user):
        raise Http404("no such page")


def visible_queues(user: Any) -> QuerySet[Queue]:
    """The queues whose conversations the user may see."""
    if not can_read_conversations(user):
        return Queue.objects.none()
    if is_console_admin(user):
        return Queue.objects.all()
    return get_objects_for_user(user, SEE_QUEUE, klass=Queue, accept_global_perms=False)


def visible_conversations(user: Any, *, queues: list[str] | None = None) -> QuerySet[Conversation]:
    """The conversations the user may see. ``queues``: the names of ``visible_queues(user)``,
    when the caller has read them already in this transaction: a list of names in the query
    instead of the grants' subquery, which a page of several queries would build and plan again
    for each (the list page: a fifth of its time)."""
    if not can_read_conversations(user):
        return Conversation.objects.none()
    if is_console_admin(user):
        return Conversation.objects.all()
    if queues is not None:
        return Conversation.objects.filter(queue__in=queues)
    return Conversation.objects.filter(queue__in=visible_queues(user).values("name"))


def access_conversation(user: Any, pk: int) -> Conversation:
    conversation = visible_conversations(user).filter(pk=pk).first()
    if conversation is None:
        raise Http404("no such conversation")
    return conversation
