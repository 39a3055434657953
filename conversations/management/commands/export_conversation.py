"""``manage.py export_conversation ID --format md|txt|json``: a conversation as text, for a ticket.

The same read as the page's download (``sharing.selectors.conversation_export_read``): visible text,
the trail at identifier/status level and the work notes, as an agent without
``view_restricted_fields`` sees them; never reasoning or dropped fields. Audited (the system as
the actor, the format in the row)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from conversations.management.arguments import text
from conversations.selectors import conversation_by_external_id
from conversations.sharing.selectors import conversation_export_read
from conversations.sharing.transcript import FORMATS


class Command(BaseCommand):
    help = "Print a conversation as a text-only transcript (Markdown, plain text or JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "conversation",
            type=text,
            help="the conversation's internal id, or the chat backend's id",
        )
        parser.add_argument("--format", choices=FORMATS, default="md", dest="fmt")
        parser.add_argument(
            "--zone", type=text, default=None, help="the time zone of the times (IANA)"
        )

    def handle(self, *args: Any, conversation: str, fmt: str, zone: str | None, **o: Any) -> None:
        row = conversation_by_external_id(conversation)
        pk = row.pk if row is not None else (int(conversation) if conversation.isdigit() else None)
        if pk is None:
            raise CommandError(f"no conversation {conversation!r}")
        try:
            export = conversation_export_read(user=None, id=pk, fmt=fmt, zone=zone)
        except Http404:
            raise CommandError(f"no conversation {conversation!r}") from None
        except KeyError:
            raise CommandError(f"unknown time zone {zone!r}") from None
        self.stdout.write(export.text, ending="")
