"""django-scim2's routes (namespace ``scim``, which its adapters reverse), each served by a view
of ``views.py`` (django-scim2's behind ``Guarded``, the discovery views our own): a route this
table does not name is refused when the URLs load, so no endpoint escapes the guard."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.urls import URLPattern, re_path
from django_scim import urls as library

from . import views

app_name = "scim"

OURS: dict[str, Any] = {
    "root": views.NotImplementedHere.as_view(),
    "users": views.Users.as_view(),
    "users-search": views.UsersSearch.as_view(),
    "groups": views.Groups.as_view(),
    "groups-search": views.GroupsSearch.as_view(),
    "service-provider-config": views.ServiceProviderConfig.as_view(),
    "resource-types": views.ResourceTypes.as_view(),
    "schemas": views.Schemas.as_view(),
    "search": views.NotImplementedHere.as_view(),
    "me": views.NotImplementedHere.as_view(),
    "bulk": views.NotImplementedHere.as_view(),
}


def _route(pattern: URLPattern) -> URLPattern:
    if pattern.name not in OURS:
        raise ImproperlyConfigured(f"django-scim2's route {pattern.name!r} has no guarded view")
    return re_path(str(pattern.pattern), OURS[pattern.name], name=pattern.name)


urlpatterns = [_route(p) for p in library.urlpatterns if isinstance(p, URLPattern)]
