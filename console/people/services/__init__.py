"""Every change to who may enter: one service each, keyword-only, atomic, one audit row each.

The People page, a sign-in through the identity provider and a SCIM request all change people
through these functions, so a change leaves the same row whichever way it came (``via``:
``page``, ``sign-in``, ``scim``). Queue grants reuse ``conversations.services.queue_grant``
(``queue.granted`` / ``queue.revoked``).

Deactivating someone (``person_deactivate``, ``person_update`` with ``active`` false,
``person_delete``) ends their sessions in the same call: ``base.after_access_lost`` is the one
place that says what else a person loses with their access.
"""

from .base import PeopleError, person_of, sessions_end
from .directory import (
    Directory,
    directory_group_create,
    directory_group_delete,
    directory_group_update,
    person_delete,
    person_provision,
    person_update,
)
from .page import person_deactivate, person_invite, person_reactivate, person_roles_set
from .sign_in import Claims, SignInRefused, person_sign_in

__all__ = [
    "Claims",
    "Directory",
    "PeopleError",
    "SignInRefused",
    "directory_group_create",
    "directory_group_delete",
    "directory_group_update",
    "person_deactivate",
    "person_delete",
    "person_invite",
    "person_of",
    "person_provision",
    "person_reactivate",
    "person_roles_set",
    "person_sign_in",
    "person_update",
    "sessions_end",
]
