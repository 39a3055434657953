"""Who may enter, beyond Django's own user and group tables.

- ``Person``: where an account comes from (a local password, the OpenID provider, SCIM) and what
  the directory said about it. A user with no ``Person`` row is local: ``createsuperuser``, the
  Django admin and the tests make users without one.
- ``DirectoryGroup``: a group the identity provider pushed through SCIM, with its members. Its
  name maps to console roles through ``OIDC_ROLE_MAP`` (``console/people/roles.py``); the role
  groups themselves (``setup_roles``) are never exposed to SCIM.
- ``PersonSession``: the sessions a person holds, so that a deactivation ends every one of them
  at once whatever the session engine.

Nothing here names a conversation or a customer, so nothing here is erased with one
(``retention/registry.py``).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


def new_scim_id() -> str:
    return str(uuid.uuid4())


class Person(models.Model):
    class Source(models.TextChoices):
        LOCAL = "local", "local password"
        PROVIDER = "provider", "single sign-on"
        SCIM = "scim", "SCIM"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="person"
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.LOCAL)
    # The OpenID provider's subject for this person (``iss`` + ``sub`` of the ID token), set at
    # the first sign-in through the provider.
    oidc_issuer = models.CharField(max_length=500, blank=True)
    oidc_subject = models.CharField(max_length=255, blank=True)
    # SCIM: the id the console gives the resource, the provisioning client's own id for it, and
    # the attributes it sent that the console keeps as given (name, displayName, emails).
    scim_id = models.CharField(max_length=64, unique=True, default=new_scim_id)
    external_id = models.CharField(max_length=255, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    # Managed by the identity provider (provisioned through SCIM or created at a sign-in through
    # it) and not deleted: what SCIM's /Users sees. Local accounts are out of its reach.
    in_directory = models.BooleanField(default=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deactivated_at = models.DateTimeField(null=True, blank=True)
    # Deleted through SCIM: the account stays (inactive, renamed) so the log's ids keep a name,
    # but SCIM no longer sees it and its subject can never sign in again.
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "console_person"  # kept from before the app was its own (migration 0001)
        permissions = [("manage_people", "Can invite people, change their roles and deactivate")]
        constraints = [
            models.UniqueConstraint(
                fields=["oidc_issuer", "oidc_subject"],
                condition=~models.Q(oidc_subject=""),
                name="person_unique_subject",
            )
        ]

    def __str__(self) -> str:
        return f"person {self.user_id} ({self.source})"


class DirectoryGroup(models.Model):
    """A group of the identity provider, pushed through SCIM (``/scim/v2/Groups``)."""

    scim_id = models.CharField(max_length=64, unique=True, default=new_scim_id)
    display_name = models.CharField(max_length=255, unique=True)
    external_id = models.CharField(max_length=255, blank=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="directory_groups", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "console_directorygroup"
        ordering = ["display_name"]

    def __str__(self) -> str:
        return self.display_name


class PersonSession(models.Model):
    """A session a person signed in with (recorded at sign-in, dropped at sign-out)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_sessions"
    )
    session_key = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "console_personsession"

    def __str__(self) -> str:
        return f"session of user {self.user_id}"
