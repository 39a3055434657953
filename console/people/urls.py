"""Routes of sign-in, the People pages and SCIM (included by console/urls.py)."""

from __future__ import annotations

from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt

from . import oidc, views
from .scim import adapters as scim

urlpatterns = [
    path("login/", views.SignInView.as_view(), name="login"),
    path(
        "login/set-password/<uidb64>/<token>/",
        views.SetPasswordView.as_view(),
        name="set-password",
    ),
    path("oidc/authenticate/", oidc.SignInStart.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", oidc.SignInCallback.as_view(), name="oidc_authentication_callback"),
    path("people/", views.people, name="people"),
    path("people/invite/", views.invite, name="person-invite"),
    path("people/<int:pk>/", views.person, name="person"),
    path("people/<int:pk>/roles/", views.person_roles, name="person-roles"),
    path("people/<int:pk>/queues/", views.person_queue, name="person-queue"),
    path("people/<int:pk>/deactivate/", views.person_deactivate_view, name="person-deactivate"),
    path("people/<int:pk>/reactivate/", views.person_reactivate_view, name="person-reactivate"),
    # SCIM 2.0 (django-scim2), console/people/scim/.
    path("scim/v2/", include("console.people.scim.urls", namespace="scim")),
    re_path(r"^scim/v2/", csrf_exempt(scim.not_found), name="scim-not-found"),
]
