"""``manage.py probe_allowance --format F --model M``: send the readiness check's two mis-sized
requests to the provider and record how it answered (conversations/monitoring/probe.py)."""

from __future__ import annotations

from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.formats import formats
from conversations.monitoring.probe import allowance_probe


class Command(BaseCommand):
    help = "Probe how a provider answers a max_tokens at the thinking budget, and one with no room."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--format",
            required=True,
            # The formats whose profile says how to ask their provider directly.
            choices=[f.name for f in formats() if f.profile.probe is not None],
        )
        parser.add_argument("--model", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rows = allowance_probe(fmt=options["format"], model=options["model"])
        except (OSError, httpx.HTTPError) as exc:
            raise CommandError(f"the provider could not be reached: {exc}") from None
        for r in rows:
            self.stdout.write(
                f"{r.kind}: {r.outcome} (HTTP {r.http_status}"
                f"{f', {r.stop_reason}' if r.stop_reason else ''}"
                f"{f', output {r.output_tokens}' if r.output_tokens is not None else ''}"
                f"{f', reasoning {r.reasoning_tokens}' if r.reasoning_tokens is not None else ''})"
                f"{f': {r.error}' if r.error else ''}"
            )
