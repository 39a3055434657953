"""``seed_demo``: demo conversations in the present, the demo's policies and alert rules, and the
demo admin.

The conversations are spread over the last 30 days (``conversations/demo.py``), every fourth one
going wrong in a way the signals watch, in the queue ``priority``; one demo alert rule per metric
of the registry (``monitoring/metrics.py``) watches that queue over 30 days, so that the next
tick (``monitoring_tick``, its beat entry under ``make run``) fires each kind once and every
signals page has something to show. ``--if-empty`` loads nothing where conversations exist,
unless they are only the demo's, loaded before yesterday: then it adds demo conversations for
the days since (at most 29), so the last 30 days keep their activity.
"""

from __future__ import annotations

import math
import os
import secrets
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Max
from tqdm import tqdm

from conversations.demo import TWIST_QUEUE, demo_bodies
from conversations.ingest.body import exchange_input
from conversations.models import AlertRule, Conversation, FieldPolicy, ModelPrice, ToolLink
from conversations.monitoring.alerts import model_price_save, rule_save
from conversations.monitoring.metrics import METRICS
from conversations.services import conversation_ingest_exchange, field_policy_save

# The demo's conversation ids (conversations/demo.py): a database holding only these is the demo's.
DEMO_ID = r"^conv_[0-9]{6}_[0-9a-f]{6}$"
# One rule per metric, on the queue where the demo's conversations go wrong, over 30 days: the
# thresholds sit below what the demo's twists give that queue, and above zero.
DEMO_THRESHOLDS = {
    "truncation": 0.02,
    "tool_calls_per_turn": 0.5,
    "repeated_tool_calls": 0.02,
    "tool_error_rate": 0.05,
    "refusal_rate": 0.02,
    "rewrite_rate": 0.02,
    "latency_p95": 30_000.0,
}
DEMO_WINDOW_MINUTES = 30 * 24 * 60
# Example prices per million tokens (input, cache read, cache write, output) of the models the
# demo's formats answer with: figures to fill the cost charts, not a price list to rely on.
DEMO_PRICES = {
    "claude-sonnet-4-5-20250929": ("3", "0.30", "3.75", "15"),
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0": ("3", "0.30", "3.75", "15"),
    "gpt-5-mini-2025-08-07": ("0.25", "0.025", "0", "2"),
    "gemini-3-pro-preview": ("2", "0.20", "0", "12"),
    "deepseek-reasoner": ("0.28", "0.028", "0", "0.42"),
}


class Command(BaseCommand):
    help = (
        "Load realistic demo conversations (all four provider formats, tool calls, reasoning) "
        "through the ingest service, and make sure an admin user exists."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--conversations", type=int, default=40)
        parser.add_argument("--if-empty", action="store_true", help="do nothing if data exists")
        parser.add_argument("--seed", type=int, default=7)

    def handle(
        self, *args: Any, conversations: int, if_empty: bool, seed: int, **options: Any
    ) -> None:
        if conversations < 1:
            raise CommandError("--conversations must be at least 1")
        self._ensure_admin()
        days = 29
        if if_empty and Conversation.objects.exists():
            gap = self._demo_gap()
            if gap is None:
                self.stdout.write("demo data: conversations exist already, nothing loaded")
                return
            # Only the demo's, grown old: the days since its newest, in proportion.
            days = min(29, gap)
            conversations = max(4, math.ceil(conversations * days / 29))
            self.stdout.write(f"demo data: loaded {gap} days ago, adding the days since")
        self._ensure_policies()
        self._ensure_rules()
        self._ensure_prices()
        start = Conversation.objects.count()
        bodies = list(demo_bodies(conversations, seed=seed, start=start, days=days))
        for body in tqdm(bodies, desc="demo exchanges", unit="exchange"):
            conversation_ingest_exchange(data=exchange_input(body))
        self.stdout.write(
            f"demo data: {conversations} conversations, {len(bodies)} exchanges loaded"
        )

    def _demo_gap(self) -> int | None:
        """Whole days since the demo was last loaded (its newest stored conversation), where
        every conversation is the demo's and that was before yesterday; None otherwise (other
        data, or a demo loaded since yesterday: its days are still the last 30)."""
        if Conversation.objects.exclude(external_id__regex=DEMO_ID).exists():
            return None
        loaded = Conversation.objects.aggregate(at=Max("created_at"))["at"]
        today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        if loaded is None or loaded >= today - timedelta(days=1):
            return None
        return (today - loaded).days

    def _ensure_rules(self) -> None:
        """One demo rule per metric of the registry, on the demo's troubled queue."""
        for name, entry in METRICS.items():
            title = f"Demo: {entry.label}"
            if AlertRule.objects.filter(name=title).exists():
                continue
            rule_save(
                rule=AlertRule(
                    name=title,
                    metric=name,
                    queue=TWIST_QUEUE,
                    window_minutes=DEMO_WINDOW_MINUTES,
                    threshold=DEMO_THRESHOLDS.get(name, 0.0),
                    min_exchanges=5,
                )
            )

    def _ensure_prices(self) -> None:
        """Example prices for the demo's models, so the cost charts and the customer panel have
        figures; a model already priced keeps its row (the admin's price table is the truth)."""
        added = 0
        for model, (fresh, cached, written, output) in DEMO_PRICES.items():
            if ModelPrice.objects.filter(model=model).exists():
                continue
            model_price_save(
                price=ModelPrice(
                    model=model,
                    input=Decimal(fresh),
                    cache_read=Decimal(cached),
                    cache_write=Decimal(written),
                    output=Decimal(output),
                )
            )
            added += 1
        if added:
            self.stdout.write(
                f"demo data: example prices for {added} models (the admin's price table edits them)"
            )

    def _ensure_policies(self) -> None:
        """Storage classes and source links for the demo's tools, so the trail shows what a
        configured console shows (the defaults keep only ids and statuses)."""
        for tool in ("get_order", "lookup_order", "getOrderStatus"):
            ToolLink.objects.get_or_create(
                tool_name=tool,
                defaults={"url_template": "https://orders.example.com/orders/{order_id}"},
            )
        wanted = [
            ("get_order", "output", "$.carrier", "status"),
            ("get_order", "output", "$.shipping_address", "restricted"),
            ("lookup_order", "output", "$.carrier", "status"),
            ("getOrderStatus", "output", "$.carrier", "status"),
        ]
        for tool, side, path, storage_class in wanted:
            if not FieldPolicy.objects.filter(tool_name=tool, side=side, path=path).exists():
                field_policy_save(
                    policy=FieldPolicy(
                        tool_name=tool,
                        side=side,
                        path=path,
                        storage_class=storage_class,
                        note="demo policy",
                    )
                )

    @transaction.atomic
    def _ensure_admin(self) -> None:
        User = get_user_model()
        if User.objects.filter(username="admin").exists():
            self.stdout.write("demo admin: user 'admin' exists (password unchanged)")
            return
        password = os.environ.get("DEMO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser("admin", "admin@example.com", password)
        self.stdout.write(f"demo admin: user 'admin', password {password}")
