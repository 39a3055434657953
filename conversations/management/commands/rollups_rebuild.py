"""``manage.py rollups_rebuild``: recompute the signals' hourly rollups from stored exchanges."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from conversations.monitoring.rollups import rollups_rebuild


class Command(BaseCommand):
    help = "Recompute every hourly rollup from the stored exchanges (one transaction)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"{rollups_rebuild()} exchanges rolled up")
