from __future__ import annotations

import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from conversations.demo import demo_bodies
from conversations.ingest.body import exchange_input
from conversations.models import Conversation, FieldPolicy, ToolLink
from conversations.services import conversation_ingest_exchange, field_policy_save


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
        if if_empty and Conversation.objects.exists():
            self.stdout.write("demo data: conversations exist already, nothing loaded")
            return
        self._ensure_policies()
        start = Conversation.objects.count()
        bodies = list(demo_bodies(conversations, seed=seed, start=start))
        for body in tqdm(bodies, desc="demo exchanges", unit="exchange"):
            conversation_ingest_exchange(data=exchange_input(body))
        self.stdout.write(
            f"demo data: {conversations} conversations, {len(bodies)} exchanges loaded"
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
