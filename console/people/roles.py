"""Roles and the identity provider's groups.

A role is one of the groups ``manage.py setup_roles`` creates (``support_agent``, ``reviewer``,
``compliance``, ``admin``). The identity provider knows its own groups; ``OIDC_ROLE_MAP`` says
which of them give which role, for sign-in (the ``OIDC_ROLE_CLAIM`` claim) and for SCIM (the
``/Groups`` a person is a member of) alike:

    OIDC_ROLE_MAP="support=support_agent,reviewers=reviewer,legal=compliance,console-admins=admin"

A provider group may appear more than once (``ops=admin,ops=compliance``). A group the map does
not name gives nothing: roles fail closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group

# Each role and exactly the model permissions its pages need (``manage.py setup_roles`` creates
# the groups and gives them these).
ROLES: dict[str, list[str]] = {
    "support_agent": ["conversations.view_conversation"],
    "reviewer": ["conversations.view_conversation"],
    # Compliance reads review grants and alerts (who may read reasoning, who read unusually much).
    "compliance": [
        "audit.view_auditevent",
        "conversations.view_reviewgrant",
        "conversations.view_reviewalert",
        "conversations.view_sharelink",
    ],
    "admin": [
        "conversations.view_conversation",
        "conversations.view_exchange",
        "conversations.view_block",
        "conversations.view_unknownblocktype",
        "conversations.view_restricted_fields",
        "conversations.view_fieldpolicy",
        "conversations.add_fieldpolicy",
        "conversations.change_fieldpolicy",
        "conversations.delete_fieldpolicy",
        "conversations.view_toollink",
        "conversations.add_toollink",
        "conversations.change_toollink",
        "conversations.delete_toollink",
        # Work notes (sharing/notes.py): saved through work_note_save, audited.
        "conversations.view_worknote",
        "conversations.add_worknote",
        "conversations.change_worknote",
        "conversations.delete_worknote",
        "conversations.view_sharelink",
        "conversations.view_reprojectionjob",
        "conversations.view_queue",
        "conversations.add_queue",
        "conversations.change_queue",
        "audit.view_auditevent",
        "conversations.view_servicetoken",
        "conversations.change_servicetoken",
        # Review grants: given and revoked (the admin's action) through reviews.py, audited.
        "conversations.view_reviewgrant",
        "conversations.add_reviewgrant",
        "conversations.change_reviewgrant",
        "conversations.view_reviewalert",
        # Alert rules and the price table (signals): saved through rule_save and
        # model_price_save, audited; the alerts and allowance probes are read-only pages.
        "conversations.view_alertrule",
        "conversations.add_alertrule",
        "conversations.change_alertrule",
        "conversations.delete_alertrule",
        "conversations.view_modelprice",
        "conversations.add_modelprice",
        "conversations.change_modelprice",
        "conversations.delete_modelprice",
        "conversations.view_alert",
        "conversations.view_notification",
        "conversations.view_allowanceprobe",
        # Retention classes: how long conversations are kept (retention_class_save, audited).
        "retention.view_retentionclass",
        "retention.add_retentionclass",
        "retention.change_retentionclass",
        "retention.delete_retentionclass",
        # The People page (console/people/): invite, roles, queue grants, deactivation.
        "people.manage_people",
    ],
}

ROLE_NAMES: tuple[str, ...] = tuple(ROLES)

ROLE_WORDS = {
    "support_agent": "Support agent",
    "reviewer": "Reviewer",
    "compliance": "Compliance",
    "admin": "Admin",
}


class RoleMapError(ValueError):
    pass


def parse_role_map(text: str) -> tuple[tuple[str, str], ...]:
    """``group=role`` pairs, comma separated; each role must be a console role."""
    pairs: list[tuple[str, str]] = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        group, sep, role = item.rpartition("=")
        group, role = group.strip(), role.strip()
        if not sep or not group:
            raise RoleMapError(
                f"OIDC_ROLE_MAP entry {item!r} is not 'provider-group=role' "
                f"(e.g. support=support_agent)"
            )
        if role not in ROLE_NAMES:
            raise RoleMapError(
                f"OIDC_ROLE_MAP entry {item!r} names the role {role!r}; the roles are "
                f"{', '.join(ROLE_NAMES)}"
            )
        pairs.append((group, role))
    return tuple(pairs)


def role_map() -> tuple[tuple[str, str], ...]:
    """The configured map (a bad one is reported by ``manage.py check``; here it maps nothing,
    so a typo never grants a role)."""
    try:
        return parse_role_map(settings.OIDC_ROLE_MAP)
    except RoleMapError:
        return ()


def roles_for_groups(groups: Iterable[str]) -> frozenset[str]:
    names = set(groups)
    return frozenset(role for group, role in role_map() if group in names)


def groups_from_claim(value: Any) -> list[str]:
    """The provider's group names from the role claim: a list of strings, or one string
    (some providers send a single group bare, or space separated)."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def roles_of(user: Any) -> frozenset[str]:
    return frozenset(
        name for name in user.groups.values_list("name", flat=True) if name in ROLE_NAMES
    )


def set_roles(user: Any, roles: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Make the user's role groups exactly ``roles`` (other groups untouched). Returns
    (before, after). Callers are services: they write the audit row."""
    wanted = frozenset(roles)
    unknown = wanted - set(ROLE_NAMES)
    if unknown:
        raise RoleMapError(f"unknown role(s): {', '.join(sorted(unknown))}")
    before = roles_of(user)
    if before != wanted:
        groups = {g.name: g for g in Group.objects.filter(name__in=ROLE_NAMES)}
        missing = wanted - set(groups)
        if missing:
            raise RoleMapError(
                f"the role group(s) {', '.join(sorted(missing))} do not exist: run "
                "`manage.py setup_roles`"
            )
        user.groups.remove(*[groups[name] for name in before - wanted if name in groups])
        user.groups.add(*[groups[name] for name in wanted - before])
        # conversations.permissions caches a user's groups on the object.
        if hasattr(user, "_console_groups"):
            del user._console_groups
    return before, wanted


def has_role(user: Any) -> bool:
    return bool(user.is_superuser or roles_of(user))
