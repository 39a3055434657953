"""Service tokens: ``Authorization: Bearer <token>``. A token opens the endpoints of its scope only
(``ServiceToken.Scope``): each API view names the scope it needs in ``token_scope``; a view that
names none is closed to every token."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from ..models import ServiceToken
from ..services import token_hash

_TABLE = ServiceToken._meta.db_table
# last_used_at is a hint for admins, not an audit trail: refresh it at most this often.
_TOUCH_EVERY = timedelta(minutes=1)


class ServiceTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[ServiceToken, None] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "the Authorization header must be 'Bearer <token>'"
            )
        try:
            token = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("invalid token") from None
        # A plain query: this runs on every ingest request.
        row = next(
            ServiceToken.objects.raw(
                f"SELECT id, name, scope, prefix, last_used_at, revoked_at FROM {_TABLE} "  # noqa: S608
                "WHERE token_sha256 = %s AND revoked_at IS NULL",
                [token_hash(token)],
            ).iterator(),
            None,
        )
        if row is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        now = timezone.now()
        if row.last_used_at is None or now - row.last_used_at > _TOUCH_EVERY:
            ServiceToken.objects.filter(pk=row.pk).update(last_used_at=now)
        return row, None

    def authenticate_header(self, request: Any) -> str:
        return 'Bearer realm="api"'


class TokenScope(permissions.IsAuthenticated):
    """An authenticated token whose scope is the view's ``token_scope`` (403 otherwise)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if not super().has_permission(request, view):
            return False
        needed = getattr(view, "token_scope", None)
        if needed is None or getattr(request.user, "scope", None) != needed:
            self.message = (
                f"this token's scope ({getattr(request.user, 'scope', '?')}) does not open "
                "this endpoint"
            )
            return False
        return True
