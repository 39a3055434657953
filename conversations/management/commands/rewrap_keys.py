"""Re-wrap every data key under the newest master key (the first of FIELD_ENCRYPTION_KEYS).

Rotation: put the new master key first in FIELD_ENCRYPTION_KEYS, keeping the old ones after it,
restart, run this command, then remove the old keys. Messages are not re-encrypted: only the
data keys are, so it is quick whatever the size of the store.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from conversations.keystore.crypto import DecryptionError
from conversations.keystore.keys import data_keys_rewrap, master_keys


class Command(BaseCommand):
    help = "Re-wrap all data keys under the newest master key (FIELD_ENCRYPTION_KEYS[0])."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            newest = master_keys()[0]
            count = data_keys_rewrap()
        except DecryptionError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"re-wrapped {count} data key(s) under master key {newest.id}")
