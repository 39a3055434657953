"""``manage.py check`` (run by migrate and runserver) refuses a People block that cannot work:
an OIDC_ROLE_MAP naming no role, single sign-on half configured, no way in at all."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

from .roles import RoleMapError, parse_role_map


@checks.register(checks.Tags.security)
def people_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    try:
        parse_role_map(settings.OIDC_ROLE_MAP)
    except RoleMapError as exc:
        errors.append(checks.Error(str(exc), id="people.E001"))
    if bool(settings.OIDC_ISSUER) != bool(settings.OIDC_CLIENT_ID):
        errors.append(
            checks.Error(
                "single sign-on needs both OIDC_ISSUER and OIDC_CLIENT_ID", id="people.E002"
            )
        )
    if not settings.LOCAL_PASSWORDS and not settings.OIDC_ISSUER:
        errors.append(
            checks.Warning(
                "LOCAL_PASSWORDS is false and no OIDC_ISSUER is set: nobody can sign in",
                id="people.W001",
            )
        )
    return errors


@checks.register(checks.Tags.database)
def username_twins(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check --database default``: accounts whose user names share a key
    (``names.py``), made before names were compared so; nothing renames them."""
    if not kwargs.get("databases"):
        return []
    from django.db import DatabaseError

    from .names import username_collisions

    try:
        groups = username_collisions()
    except DatabaseError:
        return []  # not migrated yet: the migration reports them
    return [
        checks.Warning(
            f"user names that differ only by case or Unicode form: {', '.join(group)}",
            hint="rename or deactivate all but one (the People page, the admin)",
            id="people.W002",
        )
        for group in groups
    ]
