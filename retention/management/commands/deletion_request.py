from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from retention.services import (
    DeletionInvalid,
    deletion_request_submit,
    deletion_request_submit_once,
)


def _due(text: str) -> datetime:
    moment = parse_datetime(text)
    if moment is None:
        day = parse_date(text)
        if day is None:
            raise CommandError(f"--due: not a date or datetime: {text!r}")
        moment = datetime.combine(day, time.min)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment


class Command(BaseCommand):
    help = "Submit a deletion request for a customer or conversations; prints the request's id."

    def add_arguments(self, parser: CommandParser) -> None:
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--customer", help="the customer's id (the data subject)")
        target.add_argument("--conversation", nargs="+", help="the chat backend's conversation ids")
        parser.add_argument("--reason", required=True)
        parser.add_argument(
            "--due",
            help="date or datetime (default: the next tick; at most one month from now)",
        )
        parser.add_argument(
            "--reference",
            default="",
            help="a ticket id; submitting the same one again prints the same request's id",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        target = {
            "reason": options["reason"],
            "customer": options["customer"] or "",
            "conversations": options["conversation"] or (),
            "due": _due(options["due"]) if options["due"] else None,
        }
        try:
            if options["reference"]:
                request, _ = deletion_request_submit_once(reference=options["reference"], **target)
            else:
                request = deletion_request_submit(**target)
        except DeletionInvalid as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(str(request.pk))
