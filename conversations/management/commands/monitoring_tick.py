"""``manage.py monitoring_tick``: evaluate the alert rules now and send what changed state."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from conversations.monitoring.alerts import monitoring_tick


class Command(BaseCommand):
    help = "Evaluate the alert rules over the rollups and deliver due notifications (one tick)."

    def handle(self, *args: Any, **options: Any) -> None:
        r = monitoring_tick()
        self.stdout.write(
            f"{r.evaluated} rules evaluated: {r.fired} fired, {r.resolved} resolved, "
            f"{r.muted} muted; {r.delivered} notifications delivered, {r.failed} failed"
        )
