from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from retention.services import retention_tick


class Command(BaseCommand):
    help = "Run one tick of the retention clock now (deletion requests and expired retention)."

    def handle(self, *args: Any, **options: Any) -> None:
        done = retention_tick()
        self.stdout.write(" ".join(f"{key}={value}" for key, value in sorted(done.items())))
