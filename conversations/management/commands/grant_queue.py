from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.management.arguments import text
from conversations.services import queue_grant


class Command(BaseCommand):
    help = "Let a user or a group see the conversations of a queue (--revoke to take it back)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("principal", type=text, help="a user name, or a group name")
        parser.add_argument(
            "queue", type=text, help="the queue's name (labels.queue of the exchanges)"
        )
        parser.add_argument("--revoke", action="store_true")

    def handle(self, *args: Any, principal: str, queue: str, revoke: bool, **options: Any) -> None:
        if not 0 < len(queue) <= 100:
            raise CommandError("QUEUE must be 1 to 100 characters")
        user = get_user_model().objects.filter(username=principal).first()
        group = Group.objects.filter(name=principal).first()
        if user is not None and group is not None:
            raise CommandError(f"{principal!r} is both a user and a group; rename one")
        target = user or group
        if target is None:
            raise CommandError(f"no user or group named {principal!r}")
        queue_grant(principal=target, queue_name=queue, revoke=revoke)
        kind = "user" if user is not None else "group"
        verb = "no longer sees" if revoke else "now sees"
        self.stdout.write(f"{kind} {principal} {verb} queue {queue}")
