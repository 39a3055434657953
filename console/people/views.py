"""The sign-in page and the People pages (admins: invite, roles, queue grants, deactivation).

Presentation only: every change goes through ``services.py`` (one audit row each); queue grants
through ``conversations.services.queue_grant``. The People pages need ``console.manage_people``
(the admin role): anyone else gets the 404 of a page that does not exist.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.tokens import default_token_generator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.views.decorators.http import require_POST

from conversations.services import queue_grant

from . import oidc
from .forms import DeactivateForm, InviteForm, QueueGrantForm, RolesForm
from .selectors import people_list, person_detail, queue_names
from .services import (
    PeopleError,
    person_deactivate,
    person_invite,
    person_reactivate,
    person_roles_set,
)

MANAGE_PEOPLE = "console.manage_people"


# --- signing in -------------------------------------------------------------------------------


class SignInView(auth_views.LoginView):
    """``/login/``: "Sign in with <provider>" where single sign-on is set up, and the password
    form unless ``LOCAL_PASSWORDS=false`` (then a POST is refused before any password is
    checked)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.LOCAL_PASSWORDS:
            context = oidc.login_context(request)
            context["sso_error"] = (
                "Passwords are turned off here: sign in through "
                f"{oidc.provider_name() if oidc.enabled() else 'your identity provider'}."
            )
            return render(request, "registration/login.html", context, status=403)
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        offer = oidc.login_context(self.request)
        offer.pop("form", None)
        offer.pop("next", None)
        context.update(offer)
        return context


class SetPasswordView(auth_views.PasswordResetConfirmView):
    """The one-time link an invited person sets their password with (Django's reset token: it
    stops working once a password is set, or after PASSWORD_RESET_TIMEOUT)."""

    template_name = "registration/set_password.html"
    success_url = reverse_lazy("login")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.LOCAL_PASSWORDS:
            raise Http404("local passwords are turned off")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        messages.success(self.request, "Your password is set: sign in with it.")
        return super().form_valid(form)


def set_password_link(request: HttpRequest, user: Any) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return request.build_absolute_uri(reverse("set-password", args=[uid, token]))


# --- the People pages ---------------------------------------------------------------------------


def _require_manager(user: Any) -> None:
    if not (user.is_active and user.has_perm(MANAGE_PEOPLE)):
        raise Http404("no such page")


def _person_or_404(pk: int) -> Any:
    row = person_detail(pk)
    if row is None:
        raise Http404("no such person")
    return row


@login_required
def people(request: HttpRequest) -> HttpResponse:
    _require_manager(request.user)
    context = {
        "rows": people_list(),
        "local_passwords": settings.LOCAL_PASSWORDS,
        "sso_name": oidc.provider_name() if oidc.enabled() else "",
    }
    return render(request, "console/people/people.html", context)


@login_required
def invite(request: HttpRequest) -> HttpResponse:
    _require_manager(request.user)
    if not settings.LOCAL_PASSWORDS:
        raise Http404("local passwords are turned off")
    form = InviteForm(request.POST or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                user = person_invite(actor=request.user, **form.cleaned_data)
            except PeopleError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.detail)
            else:
                context = {"invited": user, "link": set_password_link(request, user)}
                return render(request, "console/people/invited.html", context)
    return render(request, "console/people/invite.html", {"form": form}, status=status)


@login_required
def person(request: HttpRequest, pk: int) -> HttpResponse:
    _require_manager(request.user)
    row = _person_or_404(pk)
    queues = queue_names()
    context = {
        "row": row,
        "roles_form": RolesForm(initial={"roles": list(row.roles)}),
        "queues": [q for q in queues if q not in row.queues],
        "deactivate_form": DeactivateForm(),
        "sso_name": oidc.provider_name() if oidc.enabled() else "your identity provider",
    }
    return render(request, "console/people/person.html", context)


def _back(pk: int) -> HttpResponse:
    return redirect("person", pk=pk)


def _refused(request: HttpRequest, pk: int, detail: str) -> HttpResponse:
    messages.error(request, detail)
    response = _back(pk)
    return response


@login_required
@require_POST
def person_roles(request: HttpRequest, pk: int) -> HttpResponse:
    _require_manager(request.user)
    row = _person_or_404(pk)
    form = RolesForm(request.POST)
    if not form.is_valid():
        return HttpResponse(f"Bad roles: {form.errors.as_text()}", status=400)
    try:
        changed = person_roles_set(
            user=row.user, roles=form.cleaned_data["roles"], actor=request.user
        )
    except PeopleError as exc:
        return _refused(request, pk, exc.detail)
    messages.success(request, "Roles saved." if changed else "Roles unchanged.")
    return _back(pk)


@login_required
@require_POST
def person_queue(request: HttpRequest, pk: int) -> HttpResponse:
    _require_manager(request.user)
    row = _person_or_404(pk)
    form = QueueGrantForm(request.POST, queues=queue_names())
    if not form.is_valid():
        return HttpResponse(f"Bad queue grant: {form.errors.as_text()}", status=400)
    queue, revoke = form.cleaned_data["queue"], form.cleaned_data["action"] == "revoke"
    if revoke and queue not in row.queues:
        return _refused(request, pk, f"{row.user.username} has no grant on {queue}.")
    if not revoke and queue in row.queues:
        return _refused(request, pk, f"{row.user.username} sees {queue} already.")
    queue_grant(principal=row.user, queue_name=queue, revoke=revoke, actor=request.user)
    messages.success(
        request, f"{'Revoked' if revoke else 'Granted'} {queue} for {row.user.username}."
    )
    return _back(pk)


@login_required
@require_POST
def person_deactivate_view(request: HttpRequest, pk: int) -> HttpResponse:
    _require_manager(request.user)
    row = _person_or_404(pk)
    form = DeactivateForm(request.POST)
    if not form.is_valid():
        return HttpResponse(f"Bad reason: {form.errors.as_text()}", status=400)
    try:
        ended = person_deactivate(
            user=row.user, actor=request.user, reason=form.cleaned_data["reason"]
        )
    except PeopleError as exc:
        return _refused(request, pk, exc.detail)
    messages.success(
        request,
        f"{row.user.username} is deactivated: {ended} session{'s' if ended != 1 else ''} "
        "ended, and they cannot sign in.",
    )
    return _back(pk)


@login_required
@require_POST
def person_reactivate_view(request: HttpRequest, pk: int) -> HttpResponse:
    _require_manager(request.user)
    row = _person_or_404(pk)
    try:
        person_reactivate(user=row.user, actor=request.user)
    except PeopleError as exc:
        return _refused(request, pk, exc.detail)
    messages.success(request, f"{row.user.username} may sign in again.")
    return _back(pk)


def no_role(request: HttpRequest) -> HttpResponse:
    """A signed-in person with no role yet (the identity provider gave them no mapped group)."""
    return render(
        request,
        "console/people/no_role.html",
        {"sso_name": oidc.provider_name() if oidc.enabled() else ""},
        status=403,
    )
