"""django-scim2's routes (namespace ``scim``, which its adapters reverse), with the discovery
views of ``views.py`` in place of two of its own."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, re_path
from django_scim import urls as library

from . import views

app_name = "scim"

OURS: dict[str, Any] = {
    "resource-types": views.ResourceTypes.as_view(),
    "schemas": views.Schemas.as_view(),
    "search": views.NotImplementedHere.as_view(),
    "me": views.NotImplementedHere.as_view(),
    "bulk": views.NotImplementedHere.as_view(),
}


def _route(pattern: URLPattern) -> URLPattern:
    if pattern.name in OURS:
        return re_path(str(pattern.pattern), OURS[pattern.name], name=pattern.name)
    return pattern


urlpatterns = [_route(p) for p in library.urlpatterns if isinstance(p, URLPattern)]
