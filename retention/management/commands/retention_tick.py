"""``manage.py retention_tick [--until-idle]``: run the retention clock's tick now, the same code
the beat's task runs. ``--until-idle`` ticks again until a tick finds nothing to do (catching up
after downtime, or a large expiry), printing one line per tick and the time taken."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from retention.services import retention_tick


class Command(BaseCommand):
    help = "Run one tick of the retention clock now (deletion requests and expired retention)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--until-idle",
            action="store_true",
            help="tick again until a tick finds no request to execute",
        )

    def handle(self, *args: Any, until_idle: bool, **options: Any) -> None:
        started = time.perf_counter()
        ticks = 0
        while True:
            done = retention_tick()
            ticks += 1
            self.stdout.write(" ".join(f"{key}={value}" for key, value in sorted(done.items())))
            if not until_idle or not done["requests"]:
                break
        if until_idle:
            seconds = time.perf_counter() - started
            self.stdout.write(f"idle after {ticks} ticks in {seconds:.2f}s")
