"""The password backend, which ``LOCAL_PASSWORDS=false`` turns off.

With local passwords off no password signs anyone in, whatever the form that sent it (the sign-in
page, the Django admin's own login): people sign in through the identity provider only. Model
permissions still come from this backend (``has_perm``) either way.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest


class LocalPasswordBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if not settings.LOCAL_PASSWORDS:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
