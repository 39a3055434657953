from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.management.arguments import text
from conversations.replay import envelope
from conversations.selectors import conversation_by_external_id, conversation_message_raws


class Command(BaseCommand):
    help = "Print a conversation's replay JSON, byte for byte as GET .../messages returns it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("conversation", type=text, help="the chat backend's conversation id")

    def handle(self, *args: Any, conversation: str, **options: Any) -> None:
        row = conversation_by_external_id(conversation)
        if row is None:
            raise CommandError(f"no conversation {conversation!r}")
        # The envelope's bytes are UTF-8; written as text they come out byte for byte.
        self.stdout.write(envelope(conversation_message_raws(row)).decode("utf-8"))
