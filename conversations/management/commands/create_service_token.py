from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from conversations.management.arguments import text
from conversations.models import ServiceToken
from conversations.services import service_token_create


class Command(BaseCommand):
    help = (
        "Create a service token and print it (it is shown only once): for the chat backend, "
        "with --scope compliance for a ticketing system (deletion requests and legal holds), or "
        "with --scope scim for an identity provider (SCIM provisioning at /scim/v2/)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", type=text, help="a name for the token, e.g. chat-backend-prod")
        parser.add_argument(
            "--scope",
            choices=ServiceToken.Scope.values,
            default=ServiceToken.Scope.INGEST,
            help="what the token opens (default: ingest, the chat backend's endpoints)",
        )

    def handle(self, *args: Any, name: str, scope: str, **options: Any) -> None:
        name = name.strip()
        if not 0 < len(name) <= 100:
            raise CommandError("NAME must be 1 to 100 characters")
        if ServiceToken.objects.filter(name=name).exists():
            raise CommandError(f"a token named {name!r} exists already; choose another name")
        _, token = service_token_create(name=name, scope=scope)
        self.stdout.write(token)
