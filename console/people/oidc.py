"""Sign-in through an OpenID Connect provider, on mozilla-django-oidc.

mozilla-django-oidc runs the authorization code flow: ``SignInStart`` sends the browser to the
provider with a fresh ``state``, ``nonce`` and PKCE challenge (S256) kept in the session;
``SignInCallback`` takes the code back, refuses a ``state`` it did not issue, exchanges the code
with the PKCE verifier, and ``ProviderBackend`` verifies the ID token. What the library leaves to
us, done here:

- the endpoints come from the provider's discovery document (``OIDC_ISSUER`` +
  ``/.well-known/openid-configuration``, whose ``issuer`` must be ``OIDC_ISSUER``), fetched when
  someone signs in (never at start-up, never on an ordinary page) and kept for an hour;
- the ID token's ``iss``, ``aud`` (and ``azp`` when several audiences), ``exp`` and ``iat`` are
  checked beside its signature and ``nonce`` (the library checks only signature and nonce);
- the userinfo answer must be about the ID token's ``sub``;
- the account is found by the provider's subject, not by e-mail, and its roles are set from the
  ``OIDC_ROLE_CLAIM`` claim at every sign-in (``services.person_sign_in``);
- every refusal is a sign-in page with one sentence, never a 500.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import SuspiciousOperation
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.generic import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from .roles import groups_from_claim
from .services import Claims, SignInRefused, person_sign_in

log = logging.getLogger(__name__)

DISCOVERY_SECONDS = 3600
# The token endpoint authentication method that sends the client secret in a Basic header.
BASIC_AUTH = "client_secret_basic"
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384")


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read or does not fit."""


def enabled() -> bool:
    return bool(settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID)


def provider_name() -> str:
    return settings.OIDC_PROVIDER_NAME or "your identity provider"


_discovered: dict[str, tuple[float, dict[str, Any]]] = {}
_lock = threading.Lock()


def discovery() -> dict[str, Any]:
    """The provider's discovery document, checked, kept for an hour per issuer."""
    issuer = settings.OIDC_ISSUER.rstrip("/")
    now = time.monotonic()
    with _lock:
        kept = _discovered.get(issuer)
        if kept is not None and now - kept[0] < DISCOVERY_SECONDS:
            return kept[1]
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT_SECONDS)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise ProviderUnavailable(f"discovery document {url}: {exc}") from exc
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"discovery document {url} is not a JSON object")
    if str(document.get("issuer", "")).rstrip("/") != issuer:
        raise ProviderUnavailable(
            f"discovery document {url} names the issuer {document.get('issuer')!r}, not "
            f"OIDC_ISSUER {issuer!r}"
        )
    for key in ("authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint"):
        if not isinstance(document.get(key), str) or not document[key]:
            raise ProviderUnavailable(f"discovery document {url} has no {key}")
    with _lock:
        _discovered[issuer] = (now, document)
    return document


# mozilla-django-oidc reads its configuration through ``get_settings``: the endpoints from the
# discovery document, the client from this project's own setting names, the rest fixed here.
_FROM_DISCOVERY = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}


def oidc_setting(attr: str, *args: Any) -> Any:
    if attr in _FROM_DISCOVERY:
        return discovery()[_FROM_DISCOVERY[attr]]
    fixed: dict[str, Any] = {
        "OIDC_RP_CLIENT_ID": settings.OIDC_CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": settings.OIDC_CLIENT_SECRET,
        "OIDC_RP_SIGN_ALGO": settings.OIDC_SIGN_ALGO,
        "OIDC_RP_SCOPES": settings.OIDC_SCOPES,
        "OIDC_USE_PKCE": True,
        "OIDC_PKCE_CODE_CHALLENGE_METHOD": "S256",
        "OIDC_USE_NONCE": True,
        "OIDC_VERIFY_SSL": True,
        "OIDC_TIMEOUT": settings.OIDC_TIMEOUT_SECONDS,
        "OIDC_STORE_ACCESS_TOKEN": False,
        "OIDC_STORE_ID_TOKEN": False,
        "OIDC_CREATE_USER": True,
        "OIDC_ALLOW_UNSECURED_JWT": False,
        "OIDC_TOKEN_USE_BASIC_AUTH": settings.OIDC_TOKEN_AUTH == BASIC_AUTH,
    }
    if attr in fixed:
        return fixed[attr]
    return import_from_settings(attr, *args)


class ProviderBackend(OIDCAuthenticationBackend):
    """The ID token checked in full, the account found by subject, roles from the groups claim."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The parent reads the endpoints here; Django builds a backend for every sign-in attempt
        # and for every signed-in request (get_user), so the discovery waits until a code comes.
        from django.contrib.auth import get_user_model

        self.UserModel = get_user_model()

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return oidc_setting(attr, *args)

    def _configure(self) -> None:
        self.OIDC_OP_TOKEN_ENDPOINT = self.get_settings("OIDC_OP_TOKEN_ENDPOINT")
        self.OIDC_OP_USER_ENDPOINT = self.get_settings("OIDC_OP_USER_ENDPOINT")
        self.OIDC_OP_JWKS_ENDPOINT = self.get_settings("OIDC_OP_JWKS_ENDPOINT")
        self.OIDC_RP_CLIENT_ID = self.get_settings("OIDC_RP_CLIENT_ID")
        self.OIDC_RP_CLIENT_SECRET = self.get_settings("OIDC_RP_CLIENT_SECRET")
        self.OIDC_RP_SIGN_ALGO = self.get_settings("OIDC_RP_SIGN_ALGO")
        self.OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        # Only the callback view (which passes the nonce it kept) signs in through here: never a
        # password form whose address happens to carry ``code`` and ``state``.
        if request is None or "nonce" not in kwargs or not enabled():
            return None
        self._configure()
        return super().authenticate(request, **kwargs)

    def get_user(self, user_id: Any) -> Any:
        user = super().get_user(user_id)
        # A deactivated account's sessions are ended at deactivation; this refuses any left over.
        return user if user is not None and user.is_active else None

    def _verify_jws(self, payload: Any, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        alg = header.get("alg")
        if alg != self.OIDC_RP_SIGN_ALGO or alg not in SIGNING_ALGORITHMS:
            raise SuspiciousOperation(
                f"ID token signed with {alg!r}; OIDC_SIGN_ALGO is {self.OIDC_RP_SIGN_ALGO!r}"
            )
        try:
            claims: dict[str, Any] = jwt.decode(
                payload,
                key,
                algorithms=[alg],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=discovery()["issuer"],
                leeway=settings.OIDC_CLOCK_SKEW_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.InvalidTokenError as exc:
            raise SuspiciousOperation(f"ID token refused: {exc}") from exc
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SuspiciousOperation("ID token for several audiences without azp naming us")
        return claims

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        info = super().get_userinfo(access_token, id_token, payload)
        if not isinstance(info, dict) or info.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("the userinfo answer is not about the ID token's subject")
        # The ID token's own claims stand unless userinfo says more.
        return {**payload, **info}

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        info = self.get_userinfo(access_token, id_token, payload)

        def text(name: str) -> str:
            value = info.get(name)
            return value.strip() if isinstance(value, str) else ""

        claims = Claims(
            issuer=str(payload["iss"]),
            subject=str(payload["sub"])[:255],
            username=text(settings.OIDC_USERNAME_CLAIM),
            email=text("email") if "@" in text("email") else "",
            first_name=text("given_name"),
            last_name=text("family_name"),
            groups=tuple(groups_from_claim(info.get(settings.OIDC_ROLE_CLAIM))),
        )
        return person_sign_in(claims=claims)


def login_context(request: HttpRequest) -> dict[str, Any]:
    """What the sign-in page offers: the provider by name, the password form where local
    passwords are on."""
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    context: dict[str, Any] = {
        "local_passwords": settings.LOCAL_PASSWORDS,
        "next": next_url,
        "sso_name": provider_name() if enabled() else "",
    }
    if enabled():
        query = f"?{urlencode({'next': next_url})}" if next_url else ""
        context["sso_url"] = reverse("oidc_authentication_init") + query
    context["form"] = AuthenticationForm(request)
    return context


def _refused(request: HttpRequest, sentence: str, status: int) -> HttpResponse:
    context = login_context(request)
    context["sso_error"] = sentence
    return render(request, "registration/login.html", context, status=status)


class SignInStart(OIDCAuthenticationRequestView):
    """``/oidc/authenticate/``: off the provider's sign-in page with state, nonce and PKCE."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        View.__init__(self, *args, **kwargs)

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return oidc_setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("single sign-on is not configured")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = self.get_settings("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except ProviderUnavailable as exc:
            log.warning("sign-in: %s", exc)
            return _refused(request, f"{provider_name()} does not answer. Try again later.", 502)
        self.OIDC_RP_CLIENT_ID = self.get_settings("OIDC_RP_CLIENT_ID")
        return super().get(request)


class SignInCallback(OIDCAuthenticationCallbackView):
    """``/oidc/callback/``: the provider sends the browser back here with a code."""

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return oidc_setting(attr, *args)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            raise Http404("single sign-on is not configured")
        try:
            return super().get(request)
        except SignInRefused as exc:
            return _refused(request, str(exc), 403)
        except SuspiciousOperation as exc:
            log.warning("sign-in refused: %s", exc)
            return self._unverified(request)
        except requests.HTTPError as exc:
            # The token endpoint refusing the code (a PKCE verifier that does not match, a code
            # used twice or expired: "invalid_grant") says this sign-in was bad, not that the
            # provider is down: a 400, like any other sign-in that cannot be verified.
            answered = exc.response.status_code if exc.response is not None else 0
            if 400 <= answered < 500:
                log.warning("sign-in refused by the provider's token endpoint: %s", exc)
                return self._unverified(request)
            log.warning("sign-in failed: %s", exc)
            return self._incomplete(request)
        except (
            ProviderUnavailable,
            requests.RequestException,
            ValueError,
            KeyError,
            # Two first sign-ins of one subject at once: the second finds the account taken.
            IntegrityError,
        ) as exc:
            log.warning("sign-in failed: %s", exc)
            return self._incomplete(request)

    def _unverified(self, request: HttpRequest) -> HttpResponse:
        return _refused(
            request,
            f"The sign-in through {provider_name()} could not be verified, so it was refused. "
            "Start again from this page.",
            400,
        )

    def _incomplete(self, request: HttpRequest) -> HttpResponse:
        return _refused(
            request,
            f"The sign-in through {provider_name()} did not complete. Start again from this page.",
            502,
        )

    def login_failure(self) -> HttpResponse:
        return _refused(
            self.request,
            f"The sign-in through {provider_name()} did not complete. Start again from this page.",
            400,
        )
