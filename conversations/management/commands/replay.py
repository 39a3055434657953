from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.management.arguments import text
from conversations.replay import envelope
from conversations.selectors import (
    NoSuchExchange,
    conversation_by_external_id,
    conversation_message_raws,
)


class Command(BaseCommand):
    help = (
        "Print a conversation's replay JSON, byte for byte as GET .../messages returns it: the "
        "latest path, or with --exchange the path of that exchange (a conversation that branched)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("conversation", type=text, help="the chat backend's conversation id")
        parser.add_argument(
            "--exchange", type=int, default=None, help="an exchange id: replay its path"
        )

    def handle(
        self, *args: Any, conversation: str, exchange: int | None = None, **options: Any
    ) -> None:
        row = conversation_by_external_id(conversation)
        if row is None:
            raise CommandError(f"no conversation {conversation!r}")
        try:
            raws = conversation_message_raws(row, exchange=exchange)
        except NoSuchExchange:
            raise CommandError(
                f"conversation {conversation!r} has no exchange {exchange}"
            ) from None
        # The envelope's bytes are UTF-8; written as text they come out byte for byte.
        self.stdout.write(envelope(raws).decode("utf-8"))
