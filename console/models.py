"""What the console keeps of its users beyond Django's own tables: their display preferences.

Nothing here names a conversation or a customer, so nothing here is erased with one
(``retention/registry.py``). To add a preference: a field on ``UserPreference``, a form field in
``console/forms.py`` and the service ``console.preferences.user_preference_update``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UserPreference(models.Model):
    """One person's display settings. ``time_zone`` empty: follow the browser's zone (sent by
    ``static/console/console.js`` as a cookie), else the server's ``TIME_ZONE``."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference"
    )
    time_zone = models.CharField(
        max_length=64, blank=True, help_text="an IANA zone (Europe/Paris); empty: the browser's"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"preferences of user {self.user_id}"
