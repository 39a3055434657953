"""The Django admin's site, opened by the ``admin`` role.

Django's own site asks for ``is_staff``: a flag set by hand, apart from the roles. Here the
``admin`` role (``setup_roles``) opens ``/admin/`` by itself, and what each page allows is the
role's model permissions, as before. Staff users (and superusers) keep their way in. The admin's
own login form is the console's sign-in page, so ``LOCAL_PASSWORDS=false`` and single sign-on
hold there too.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any

from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme


class ConsoleAdminSite(admin.AdminSite):
    site_header = "Support console administration"
    site_title = "Support console"

    def has_permission(self, request: HttpRequest) -> bool:
        from conversations.permissions import is_console_admin

        user: Any = request.user
        return bool(user.is_active and (user.is_staff or is_console_admin(user)))

    def admin_view(self, view: Callable[..., Any], cacheable: bool = False) -> Any:
        """A signed-in person without the role gets the 404 of a page that does not exist
        (DESIGN invariant 8), not a second sign-in form."""
        inner = super().admin_view(view, cacheable)

        def gate(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if request.user.is_authenticated and not self.has_permission(request):
                raise Http404("no such page")
            return inner(request, *args, **kwargs)

        return update_wrapper(gate, inner)

    def login(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        target = request.GET.get(REDIRECT_FIELD_NAME, "")
        if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
            target = ""
        target = target or reverse("admin:index", current_app=self.name)
        if self.has_permission(request):
            return HttpResponseRedirect(target)
        if request.user.is_authenticated:
            raise Http404("no such page")
        return redirect_to_login(target)
