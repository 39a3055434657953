from __future__ import annotations

import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from conversations.demo import demo_bodies
from conversations.models import Conversation
from conversations.planning import exchange_input
from conversations.services import conversation_ingest_exchange


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
        start = Conversation.objects.count()
        bodies = list(demo_bodies(conversations, seed=seed, start=start))
        for body in tqdm(bodies, desc="demo exchanges", unit="exchange"):
            conversation_ingest_exchange(data=exchange_input(body))
        self.stdout.write(
            f"demo data: {conversations} conversations, {len(bodies)} exchanges loaded"
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
