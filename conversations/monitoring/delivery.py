"""Delivering notifications: each one claimed, sent and recorded on its own, outside any
transaction or row lock.

A due notification is claimed in a short transaction (skip-locked): its attempt is counted and
its next attempt pushed past the send's timeout, so a worker that dies while sending leaves it to
a later tick, and no other tick sends it twice meanwhile. The send itself runs with no
transaction open (a webhook that never answers holds no lock, and does not hold back the audit
sealer's horizon, which waits for the oldest running transaction) and costs at most
``NOTIFY_TIMEOUT_SECONDS``. Its outcome is written to that notification only: any failure
(refused destination, timeout, a status other than 2xx, an address the mail server rejects,
anything a send can raise) is recorded as ``last_error`` with its attempt and never stops the
others. A refused destination is final (no retry can make it allowed); other failures are
retried a few times now and by later ticks with a backoff, up to ``Notification.ATTEMPTS``.

Webhooks go to the address ``destinations.webhook_target`` checked (never re-resolved by the
HTTP client), with the rule's host in ``Host`` and as the TLS server name, and no redirect is
followed. Rules saved before names and recipients were validated cannot break the mail: the
subject is stripped of line breaks and a bad recipient is refused on its own notification.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from ..models import Alert, AlertRule, Notification
from ..reviews.notify import review_request_payload
from .destinations import Refused, validate_recipients, webhook_target
from .metrics import shown


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The webhook signature header's value."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def notification_text(rule: AlertRule, alert: Alert, state: str) -> str:
    scope = f"{alert.queue or 'no queue'} · {alert.snapshot or 'unknown snapshot'}"
    what = (
        f"{shown(rule.metric, alert.value)} over {alert.volume:,} exchanges in the last "
        f"{rule.window_minutes} min (threshold {shown(rule.metric, rule.threshold)})"
    )
    link = f"{settings.SIGNALS_BASE_URL.rstrip('/')}/signals/alerts/{alert.pk}/"
    verb = "FIRING" if state == Alert.State.FIRING else "resolved"
    more = f"; {alert.detail}" if alert.detail and state == Alert.State.FIRING else ""
    return f"[{verb}] {rule.name}: {scope}: {what}{more}. {link}"


def _payload(n: Notification) -> tuple[str, str, dict[str, Any]]:
    if n.review_request is not None:
        return review_request_payload(n.review_request)
    event = n.event
    assert event is not None  # a notification is about an alert's event or a review request
    alert = event.alert
    rule = alert.rule
    text = notification_text(rule, alert, event.state)
    body = {
        "text": text,
        "rule": rule.name,
        "metric": rule.metric,
        "state": event.state,
        "queue": alert.queue,
        "snapshot": alert.snapshot,
        "value": event.value,
        "volume": event.volume,
        "threshold": rule.threshold,
        "window_minutes": rule.window_minutes,
        "at": event.at.isoformat(),
        "alert": alert.pk,
    }
    subject = text.split(": ", 1)[0] + f": {alert.queue or '-'} · {alert.snapshot or '-'}"
    return " ".join(subject.split()), text, body


def _post(n: Notification, raw: bytes) -> None:
    target = webhook_target(n.target)
    timestamp = str(int(time.time()))
    rule_secret = n.event.alert.rule.webhook_secret if n.event is not None else ""
    secret = rule_secret or settings.SIGNALS_WEBHOOK_SECRET
    headers = {
        "Content-Type": "application/json",
        "X-Signals-Timestamp": timestamp,
        "Host": target.host_header(),
    }
    if secret:
        headers["X-Signals-Signature"] = signature(secret, timestamp, raw)
    # No proxy from the environment (it would connect elsewhere than the checked address).
    with httpx.Client(
        timeout=httpx.Timeout(settings.NOTIFY_TIMEOUT_SECONDS),
        follow_redirects=False,
        trust_env=False,
    ) as client:
        response = client.post(
            target.pinned_url(),
            content=raw,
            headers=headers,
            extensions={"sni_hostname": target.host},
        )
    if response.is_redirect:
        raise httpx.HTTPStatusError(
            f"redirect {response.status_code} not followed",
            request=response.request,
            response=response,
        )
    response.raise_for_status()


def _send(n: Notification) -> None:
    subject, text, body = _payload(n)
    if n.channel == Notification.Channel.EMAIL:
        try:
            validate_recipients(n.target)
        except ValidationError as exc:
            raise Refused(" ".join(exc.messages)) from None
        send_mail(subject, text, settings.SIGNALS_FROM_EMAIL, [n.target])
        return
    _post(n, json.dumps(body, separators=(",", ":")).encode())


def _claim(pk: int) -> Notification | None:
    """Count an attempt on one due notification and push its next attempt past the send (a
    short transaction; ``None`` when another tick holds it or it is no longer due)."""
    lease = timedelta(seconds=settings.NOTIFY_TIMEOUT_SECONDS * 4 + 30)
    with transaction.atomic():
        n = (
            # Only the notification's row is locked (what it is about is read, not locked).
            Notification.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related(
                "event__alert__rule", "review_request__requester", "review_request__conversation"
            )
            .filter(
                pk=pk,
                delivered_at__isnull=True,
                next_attempt_at__lte=timezone.now(),
                attempts__lt=Notification.ATTEMPTS,
            )
            .first()
        )
        if n is None:
            return None
        n.attempts += 1
        n.next_attempt_at = timezone.now() + lease
        n.save(update_fields=["attempts", "next_attempt_at"])
    return n


def _record(n: Notification, error: str, *, final: bool = False) -> None:
    now = timezone.now()
    fields: dict[str, Any] = {"attempts": n.attempts, "last_error": error[:300]}
    if not error:
        fields["delivered_at"] = now
    elif final:
        fields["attempts"] = Notification.ATTEMPTS
    else:
        fields["next_attempt_at"] = now + timedelta(seconds=30 * 2**n.attempts)
    Notification.objects.filter(pk=n.pk).update(**fields)


def _deliver_one(n: Notification, quick_retries: int) -> bool:
    """Send one claimed notification (with no transaction open); True when delivered."""
    for attempt in range(quick_retries + 1):
        try:
            _send(n)
        except Refused as exc:
            _record(n, f"refused: {exc}", final=True)
            return False
        except httpx.TimeoutException as exc:
            # A receiver that does not answer is not asked again in this tick.
            _record(n, f"{type(exc).__name__}: no answer in {settings.NOTIFY_TIMEOUT_SECONDS} s")
            return False
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            if attempt < quick_retries and n.attempts < Notification.ATTEMPTS:
                time.sleep(0.2 * 2**attempt)
                n.attempts += 1
                continue
            _record(n, error)
            return False
        _record(n, "")
        return True
    return False  # pragma: no cover (the loop always returns)


@dataclass
class Delivered:
    """What one delivery pass did: notifications sent, and those that failed this time."""

    delivered: int = 0
    failed: int = 0


def notifications_deliver(*, quick_retries: int = 2) -> Delivered:
    """Send every due notification, each claimed, sent and recorded on its own."""
    result = Delivered()
    due = list(
        Notification.objects.filter(
            delivered_at__isnull=True,
            next_attempt_at__lte=timezone.now(),
            attempts__lt=Notification.ATTEMPTS,
        )
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)
    )
    for pk in due:
        n = _claim(pk)
        if n is None:
            continue
        if _deliver_one(n, quick_retries):
            result.delivered += 1
        else:
            result.failed += 1
    return result
