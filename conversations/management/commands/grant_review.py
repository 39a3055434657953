"""``grant_review USER CONVERSATION --purpose CATEGORY --reference TICKET --expires DATETIME``, or
``grant_review --revoke GRANT_ID [--reason TEXT]``: give or end one reviewer's reasoning review of
one conversation (``conversations.reviews``; both audited)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from conversations.models import Conversation, ReviewGrant
from conversations.reviews import (
    MAX_GRANT_DAYS,
    GrantRefused,
    review_grant_create,
    review_grant_revoke,
)

_DURATION = re.compile(r"^\+?(\d{1,4})([dh])$")


def parse_expiry(text: str, *, now: datetime | None = None) -> datetime:
    """An ISO 8601 date-time (naive: in the current time zone), a date (its end of day is the
    start of the next), or a duration from now: ``7d``, ``12h``."""
    now = now or timezone.now()
    if match := _DURATION.match(text.strip()):
        count, unit = int(match.group(1)), match.group(2)
        return now + (timedelta(days=count) if unit == "d" else timedelta(hours=count))
    value: datetime | None = None
    try:
        # A bare date first: parse_datetime reads "2025-07-01" as its midnight, the wrong end.
        if (day := parse_date(text)) is not None:
            value = datetime.combine(day + timedelta(days=1), datetime.min.time())
        else:
            value = parse_datetime(text)
    except ValueError:
        value = None
    if value is None:
        raise CommandError(
            f"--expires {text!r}: give an ISO date-time (2025-07-01T18:00+02:00), a date "
            "(2025-07-01: until the end of that day) or a duration (7d, 12h)"
        )
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_current_timezone())
    return value


def find_conversation(ref: str) -> Conversation:
    """By internal number or by the chat backend's id; a number that is both is ambiguous."""
    by_external = Conversation.objects.filter(external_id=ref).first()
    by_pk = Conversation.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
    if by_pk is not None and by_external is not None and by_pk.pk != by_external.pk:
        raise CommandError(
            f"{ref!r} is conversation #{by_pk.pk} and the external id of #{by_external.pk}; "
            f"give the other's external id, or #{by_external.pk}'s number"
        )
    found = by_pk or by_external
    if found is None:
        raise CommandError(f"no conversation numbered or named {ref!r}")
    return found


class Command(BaseCommand):
    help = (
        "Grant one reviewer the reasoning review of one conversation, for a purpose and a ticket, "
        f"until a date (at most {MAX_GRANT_DAYS} days); or --revoke a grant. Both are audited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", nargs="?", help="the reviewer's user name")
        parser.add_argument(
            "conversation", nargs="?", help="the conversation's number, or the chat backend's id"
        )
        parser.add_argument(
            "--purpose", choices=ReviewGrant.Purpose.values, help="the purpose category"
        )
        parser.add_argument("--reference", help="the ticket id of the investigation")
        parser.add_argument("--expires", help="ISO date-time, date, or duration (7d, 12h)")
        parser.add_argument(
            "--granted-by", help="the user name of the person granting (default: the system)"
        )
        parser.add_argument("--revoke", type=int, metavar="GRANT_ID", help="revoke this grant")
        parser.add_argument("--reason", default="", help="why the grant is revoked")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["revoke"] is not None:
            self._revoke(options)
        else:
            self._grant(options)

    def _user(self, name: str, what: str) -> Any:
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"no user named {name!r} ({what})")
        return user

    def _grant(self, options: dict[str, Any]) -> None:
        if options["reason"]:
            raise CommandError("--reason goes with --revoke")
        missing = [
            name
            for name, key in (
                ("USER", "user"),
                ("CONVERSATION", "conversation"),
                ("--purpose", "purpose"),
                ("--reference", "reference"),
                ("--expires", "expires"),
            )
            if not options[key]
        ]
        if missing:
            raise CommandError(f"missing {', '.join(missing)}")
        reviewer = self._user(options["user"], "the reviewer")
        conversation = find_conversation(options["conversation"])
        granted_by = (
            self._user(options["granted_by"], "--granted-by") if options["granted_by"] else None
        )
        try:
            grant = review_grant_create(
                reviewer=reviewer,
                conversation=conversation,
                purpose=options["purpose"],
                reference=options["reference"],
                expires_at=parse_expiry(options["expires"]),
                granted_by=granted_by,
            )
        except GrantRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"grant {grant.pk}: {reviewer.get_username()} may review conversation "
            f"#{conversation.pk} until {grant.expires_at.isoformat()} "
            f"({grant.purpose}, {grant.reference})"
        )

    def _revoke(self, options: dict[str, Any]) -> None:
        extra = [key for key in ("user", "conversation", "purpose", "expires") if options[key]]
        if extra:
            raise CommandError("--revoke takes a grant id only (and --reason)")
        try:
            grant = review_grant_revoke(grant_id=options["revoke"], reason=options["reason"])
        except GrantRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"grant {grant.pk} revoked")
