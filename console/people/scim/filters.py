"""SCIM filters (``GET /Users?filter=userName eq "bjensen"``) to SQL, through django-scim2's
filter parser (scim2-filter-parser). django-scim2 reads these classes while it defines its
adapters, so this module imports nothing of the package's other modules.

Each filterable attribute maps to a column; an attribute not in the map matches nothing. The
parser's SQL only picks ids: the rows come back through the ORM, restricted to the accounts SCIM
may see (``Person.in_directory``) and with what their representation needs joined in.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django_scim.filters import FilterQuery

from ..models import DirectoryGroup

USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"


# Parentheses and brackets nest at most this deep: the parser and its SQL transpiler recurse
# once per level (500 levels was a RecursionError, and a 500).
MAX_FILTER_DEPTH = 16


def _check(filter_query: Any) -> None:
    """A filter PostgreSQL can take as parameters, nested within ``MAX_FILTER_DEPTH`` (django-scim2
    answers ValueError with a 400)."""
    if not isinstance(filter_query, str) or "\x00" in filter_query or len(filter_query) > 2000:
        raise ValueError("a filter is a string of at most 2000 characters, without NUL")
    depth = deepest = 0
    for character in filter_query:
        if character in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif character in ")]":
            depth -= 1
    if deepest > MAX_FILTER_DEPTH:
        raise ValueError(f"a filter nests at most {MAX_FILTER_DEPTH} levels of parentheses")


def _with_urn(attr_map: dict[tuple[str, str | None, str | None], str], urn: str) -> dict[Any, str]:
    out: dict[Any, str] = dict(attr_map)
    for (attr, sub, _), column in attr_map.items():
        out[(attr, sub, urn)] = column
    return out


class UserFilter(FilterQuery):
    model_getter = get_user_model
    joins = ("JOIN console_person ON console_person.user_id = auth_user.id",)
    attr_map = _with_urn(
        {
            ("id", None, None): "console_person.scim_id",
            ("externalId", None, None): "console_person.external_id",
            ("userName", None, None): "auth_user.username",
            ("active", None, None): "auth_user.is_active",
            ("displayName", None, None): "console_person.attributes->>'displayName'",
            ("name", "givenName", None): "auth_user.first_name",
            ("name", "familyName", None): "auth_user.last_name",
            ("name", "formatted", None): "console_person.attributes->'name'->>'formatted'",
            # The primary address (the one the console keeps on the account).
            ("emails", None, None): "auth_user.email",
            ("emails", "value", None): "auth_user.email",
        },
        USER_URN,
    )

    @classmethod
    def search(cls, filter_query: str, request: Any = None) -> QuerySet[Any]:
        _check(filter_query)
        q = cls.query_class(filter_query, cls.table_name(), cls.attr_map, cls.joins)
        User = get_user_model()
        if q.where_sql is None:
            return User.objects.none()
        sql, params = cls.get_raw_args(q, request)
        ids = [row.pk for row in User.objects.raw(sql, params)]
        return (
            User.objects.filter(pk__in=ids, person__in_directory=True)
            .select_related("person")
            .prefetch_related("directory_groups")
            .order_by("pk")
        )


class GroupFilter(FilterQuery):
    model_getter = DirectoryGroup
    joins = (
        "LEFT JOIN console_directorygroup_members AS m "
        "ON m.directorygroup_id = console_directorygroup.id",
        "LEFT JOIN console_person AS mp ON mp.user_id = m.user_id",
    )
    attr_map = _with_urn(
        {
            ("id", None, None): "console_directorygroup.scim_id",
            ("externalId", None, None): "console_directorygroup.external_id",
            ("displayName", None, None): "console_directorygroup.display_name",
            ("members", None, None): "mp.scim_id",
            ("members", "value", None): "mp.scim_id",
        },
        GROUP_URN,
    )

    @classmethod
    def table_name(cls) -> str:
        return str(DirectoryGroup._meta.db_table)

    @classmethod
    def search(cls, filter_query: str, request: Any = None) -> QuerySet[Any]:
        _check(filter_query)
        q = cls.query_class(filter_query, cls.table_name(), cls.attr_map, cls.joins)
        if q.where_sql is None:
            return DirectoryGroup.objects.none()
        sql, params = cls.get_raw_args(q, request)
        ids = [row.pk for row in DirectoryGroup.objects.raw(sql, params)]
        return (
            DirectoryGroup.objects.filter(pk__in=ids)
            .prefetch_related("members__person")
            .order_by("pk")
        )
