"""``manage.py reasoning_readiness [--model M] [--queue Q] [--since DATE] [--json]``: how to size
``max_tokens`` from the measured tail, and what reasoning costs and buys
(conversations/monitoring/readiness.py)."""

from __future__ import annotations

import json
from datetime import datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date

from conversations.management.arguments import text
from conversations.monitoring.readiness import reasoning_readiness


class Command(BaseCommand):
    help = "The reasoning readiness report: the output-token tail, a max_tokens, the two arms."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", type=text, help="a served snapshot or a requested model")
        parser.add_argument("--queue", type=text)
        parser.add_argument("--since", type=text, help="YYYY-MM-DD")
        parser.add_argument("--json", action="store_true", help="for machines")

    def handle(self, *args: Any, **options: Any) -> None:
        since = None
        if options["since"]:
            try:
                day = parse_date(options["since"])
            except ValueError:  # well formed, not a date: 9999-99-99
                day = None
            if day is None:
                raise CommandError("--since: expected a date, YYYY-MM-DD")
            since = timezone.make_aware(datetime.combine(day, time.min))
        r = reasoning_readiness(model=options["model"], queue=options["queue"], since=since)
        if options["json"]:
            self.stdout.write(json.dumps(r.as_json(), indent=2))
            return
        w = self.stdout.write
        w(
            f"Reasoning readiness: {r.model or 'every model'}, {r.queue or 'every queue'}"
            f"{f', since {r.since[:10]}' if r.since else ''}"
        )
        for warning in r.alias_warnings:
            w(f"  WARNING: {warning}")
        w(f"  exchanges: {r.exchanges:,}; hit the limit: {r.hit_limit:,}")
        w(f"  output tokens p50 / p90 / p99: {r.p50} / {r.p90} / {r.p99} ({r.precision})")
        w(f"  largest thinking budget seen: {r.max_budget}")
        w(f"  recommended max_tokens (from the p99, not the median): {r.recommended_max_tokens}")
        if r.hidden_share is not None:
            label = f" (estimated for {r.hidden_estimated} exchanges)" if r.hidden_estimated else ""
            w(f"  hidden (reasoning) share of output: {r.hidden_share * 100:.1f} %{label}")
        for arm in r.arms:
            price = (
                f"${arm.price_per_conversation:.4f} per conversation"
                if arm.price_per_conversation is not None
                else "no price"
            )
            outcomes = ", ".join(f"{k} {v * 100:.0f} %" for k, v in arm.outcomes.items())
            w(
                f"  {arm.name}: {arm.exchanges:,} exchanges, {arm.conversations:,} conversations, "
                f"{price}; {outcomes or 'no outcome recorded'}"
            )
        if r.price_per_resolution_point is not None:
            w(f"  price per point of resolution gained: ${r.price_per_resolution_point:.4f}")
        for p in r.probes:
            w(
                f"  probe {p['snapshot'] or p['model']} {p['kind']}: {p['outcome']} "
                f"(HTTP {p['http_status']})"
            )
