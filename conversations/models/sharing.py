"""What leaves the console: share links and work notes (``conversations/sharing/``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from .store import Conversation


class ShareLink(models.Model):
    """A read-only link to a conversation's text-only transcript up to ``boundary_sequence`` (the
    last message stored when it was made). No text is kept here: the page is rendered at each
    opening through the one projection, so a policy change or an erasure applies to it. The
    token is signed (``sharing.links``) and only its SHA-256 is stored; the row goes with its
    conversation (``retention/registry.py``). A legal hold never touches ``expires_at``."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="share_links"
    )
    token_sha256 = models.CharField(max_length=64, unique=True)
    boundary_sequence = models.PositiveIntegerField(
        help_text="messages up to this sequence are shown; later ones are not"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    opened_count = models.PositiveIntegerField(default=0)
    last_opened_at = models.DateTimeField(null=True, blank=True)
    # The token sealed with the conversation's data key, so the conversation page can show the
    # link again to those who may read it; shredding the key makes it unreadable with the rest.
    token_ciphertext = models.BinaryField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"share link {self.pk} on conversation {self.conversation_id}"

    @property
    def audit_actor(self) -> str:
        """How the audit log names the link when it is the actor (an opening has no user)."""
        return f"share-link:{self.pk}"

    def state(self, now: Any) -> str:
        if self.revoked_at is not None:
            return "revoked"
        return "live" if self.expires_at > now else "expired"


class WorkNote(models.Model):
    """An admin's progress line for one tool, over fields its policies keep and show to
    everyone ("Looked up order {order_id}: {status}"); never model text
    (``sharing.notes``)."""

    tool_name = models.CharField(max_length=200, unique=True)
    template = models.CharField(
        max_length=300,
        help_text="{placeholders} name a field's key (order_id, status); only identifier, "
        "status and display fields may be named",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tool_name"]

    def __str__(self) -> str:
        return f"{self.tool_name}: {self.template}"
