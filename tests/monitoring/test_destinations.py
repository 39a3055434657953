"""Where notifications may go, and what a bad one may cost (issue cases 2, 3 and 10's webhook).

- Names and recipients carrying line breaks, and recipients that are not one address, are
  refused on save (model, service, admin form) with the field named; nothing is stored.
- Webhooks to internal destinations (loopback, private, link-local, multicast, reserved,
  unspecified; IPv4 and IPv6; cloud metadata names; userinfo; a bare ``host:port``) are refused on
  save and at delivery, unless NOTIFY_ALLOWED_HOSTS names the host (here: 127.0.0.1, a real
  receiver on loopback).
- A rule stored before validation (written with SQL) fails its own notifications, recorded on
  each, and every other notification is still delivered in the same tick; a receiver that never
  answers costs NOTIFY_TIMEOUT_SECONDS with no transaction open; a redirect is not followed.
- The admin role disables and deletes a rule that has alerts (a superuser got 403 before).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from conversations.models import Alert, AlertEvent, AlertRule, Notification
from conversations.monitoring.alerts import monitoring_tick, rule_save
from conversations.monitoring.delivery import notifications_deliver
from conversations.monitoring.destinations import Refused, webhook_target
from tests.factories import UserFactory, roles

pytestmark = pytest.mark.django_db

INTERNAL = [
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://172.16.0.5/",
    "http://[::1]/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://100.64.0.1/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://localhost:8000/",
    "http://127.0.0.1:6379/",
    "https://user:pass@hooks.example/x",
    "https://@hooks.example/x",
    "ftp://hooks.example/x",
    "127.0.0.1:6379",
]


class Receiver:
    """A webhook receiver on loopback. ``mode``: "ok" (204), "redirect" (302 to /elsewhere) or
    "hang" (reads the request, never answers, until released)."""

    def __init__(self, mode: str = "ok") -> None:
        self.paths: list[str] = []
        self.hosts: list[str] = []
        self.mode = mode
        self.release = threading.Event()
        self.seen_in_transaction: list[int] = []
        self.sealed_meanwhile: list[bool] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                receiver.paths.append(self.path)
                receiver.hosts.append(self.headers["Host"])
                if receiver.mode == "hang":
                    receiver.seen_in_transaction.append(sessions_in_transaction())
                    receiver.sealed_meanwhile.append(audit_row_sealed())
                    receiver.release.wait(30)
                    return
                if receiver.mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", "/elsewhere")
                    self.end_headers()
                    return
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for r in made:
        r.close()


def receiver(receivers: list[Receiver], mode: str = "ok") -> Receiver:
    r = Receiver(mode)
    receivers.append(r)
    return r


def sessions_in_transaction() -> int:
    """Other sessions of this test database holding a transaction open (seen from outside)."""
    from django.db import connection

    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as c:
        row = c.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%%'"
        ).fetchone()
    return int(row[0]) if row else -1


def audit_row_sealed() -> bool:
    """An audit row written and committed now is sealed now: nothing holds the sealer's horizon
    back (in this thread's own connection, as a page and the sealer would)."""
    from django.db import connection, transaction

    import audit
    from audit.models import AuditSeal
    from audit.sealer import seal_pending

    try:
        with transaction.atomic():
            row = audit.record("alert_rule.changed", change="probe", rule=0)
        seal_pending()
        return AuditSeal.objects.filter(event_id=row.pk).exists()
    finally:
        connection.close()


def rule(name: str = "Probe", **fields: Any) -> AlertRule:
    values: dict[str, Any] = {"metric": "truncation", "threshold": 0.05, "min_exchanges": 1}
    values.update(fields)
    return AlertRule(name=name, **values)


def queued(r: AlertRule, channel: str, target: str) -> Notification:
    """A firing alert of ``r`` with one notification due now (as the tick queues them)."""
    now = timezone.now()
    alert, _ = Alert.objects.get_or_create(
        rule=r,
        queue="billing",
        snapshot="s",
        defaults={
            "state": "firing",
            "value": 0.2,
            "volume": 25,
            "since": now,
            "window_start": now - timedelta(hours=1),
            "evaluated_at": now,
        },
    )
    event = AlertEvent.objects.create(
        alert=alert, state="firing", value=0.2, volume=25, window_start=now, at=now
    )
    return Notification.objects.create(
        event=event, channel=channel, target=target, next_attempt_at=now
    )


# --- on save ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Probe\r\nBcc: x@127.0.0.1"),
        ("name", "Probe\nX"),
        ("emails", "a@127.0.0.1\r\nBcc: b@127.0.0.1"),
        ("emails", "@@"),
        ("emails", "ok@example.com, not an address"),
        ("emails", "a@example.com\nb@example.com"),
    ],
)
def test_names_and_recipients_with_line_breaks_or_bad_addresses_are_refused(
    field: str, value: str
) -> None:
    before = AlertRule.objects.count()
    with pytest.raises(ValidationError) as caught:
        rule_save(rule=rule(**{"name": "Probe", field: value}))
    assert list(caught.value.message_dict) == [field]
    assert AlertRule.objects.count() == before


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_webhooks_are_refused_on_save(url: str, settings: Any) -> None:
    settings.NOTIFY_ALLOWED_HOSTS = []
    before = AlertRule.objects.count()
    with pytest.raises(ValidationError) as caught:
        rule_save(rule=rule(webhook_url=url))
    assert list(caught.value.message_dict) == ["webhook_url"]
    assert AlertRule.objects.count() == before


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_webhooks_are_refused_at_delivery(url: str, settings: Any) -> None:
    """A destination stored before the check (SQL) is refused when its notification is sent:
    final (no retry), the reason recorded on it."""
    settings.NOTIFY_ALLOWED_HOSTS = []
    r = rule()
    r.save()  # as SQL would: no validation
    n = queued(r, "webhook", url)
    result = notifications_deliver(quick_retries=0)
    n.refresh_from_db()
    assert (result.failed, result.delivered) == (1, 0)
    assert n.delivered_at is None and n.attempts == Notification.ATTEMPTS
    assert n.last_error.startswith("refused: ")


def test_the_resolved_address_is_checked_and_pinned(settings: Any) -> None:
    settings.NOTIFY_ALLOWED_HOSTS = []
    with pytest.raises(Refused, match="internal name"):
        webhook_target("http://hooks.localhost/")
    # A name resolved by the system (the machine's own name, or localhost when allowed) is
    # checked by the addresses it resolves to, and delivery connects to that address.
    settings.NOTIFY_ALLOWED_HOSTS = ["localhost"]
    target = webhook_target("http://localhost:9/x?y=1")
    assert target.host == "localhost" and target.address in {"127.0.0.1", "::1"}
    assert target.pinned_url() in {"http://127.0.0.1:9/x?y=1", "http://[::1]:9/x?y=1"}
    assert target.host_header() == "localhost:9"
    own = socket.gethostname()
    try:
        addresses = {i[4][0] for i in socket.getaddrinfo(own, 80)}
    except OSError:
        return
    settings.NOTIFY_ALLOWED_HOSTS = []
    if all(a.startswith(("127.", "::1")) for a in addresses):
        with pytest.raises(Refused, match="loopback"):
            webhook_target(f"http://{own}/")


def test_the_admin_form_refuses_them_with_the_field_named(client: Client, settings: Any) -> None:
    settings.NOTIFY_ALLOWED_HOSTS = []
    client.force_login(UserFactory(username="root", is_superuser=True, is_staff=True))
    before = AlertRule.objects.count()
    data = {
        "name": "Probe\r\nBcc: x@127.0.0.1",
        "metric": "truncation",
        "queue": "",
        "snapshot": "",
        "window_minutes": "60",
        "threshold": "0.05",
        "min_exchanges": "20",
        "enabled": "on",
        "webhook_url": "127.0.0.1:6379",
        "webhook_secret": "",
        "emails": "@@",
    }
    page = client.post("/admin/conversations/alertrule/add/", data)
    assert page.status_code == 200
    errors = page.context["adminform"].form.errors
    assert set(errors) == {"name", "webhook_url", "emails"}
    assert "http:// or https://" in str(errors["webhook_url"])
    assert AlertRule.objects.count() == before
    assert client.get("/admin/conversations/alertrule/").status_code == 200


def test_an_allowed_loopback_receiver_saves_and_receives(receivers: list[Receiver]) -> None:
    hook = receiver(receivers)
    r = rule_save(rule=rule(webhook_url=hook.url, emails="oncall@example.com"))
    queued(r, "webhook", r.webhook_url)
    queued(r, "email", "oncall@example.com")
    result = notifications_deliver()
    assert (result.delivered, result.failed) == (2, 0)
    assert hook.paths == ["/hook"]
    assert hook.hosts == [hook.url.split("/")[2]]
    assert len(mail.outbox) == 1


# --- at delivery: one bad notification costs only itself --------------------------------------


def test_a_rule_stored_before_validation_blocks_no_other_notification(
    receivers: list[Receiver], client: Client
) -> None:
    hook = receiver(receivers)
    bad = rule("Probe\r\nBcc: x@127.0.0.1", emails="a@127.0.0.1\r\nBcc: b@127.0.0.1, @@")
    bad.save()  # as SQL would
    good = rule_save(rule=rule("Fine", webhook_url=hook.url, emails="oncall@example.com"))
    broken = [queued(bad, "email", "a@127.0.0.1\r\nBcc: b@127.0.0.1"), queued(bad, "email", "@@")]
    fine = [queued(good, "webhook", hook.url), queued(good, "email", "oncall@example.com")]
    result = notifications_deliver(quick_retries=0)
    assert result.delivered == 2 and result.failed == 2
    for n in broken:
        n.refresh_from_db()
        assert n.delivered_at is None and n.attempts == Notification.ATTEMPTS  # final
        assert n.last_error.startswith(("refused: not a valid e-mail", "refused: may not contain"))
    for n in fine:
        n.refresh_from_db()
        assert n.delivered_at is not None and n.last_error == ""
    assert [m.to for m in mail.outbox] == [["oncall@example.com"]]
    assert "\n" not in mail.outbox[0].subject
    # The tick and the pages still work.
    monitoring_tick()
    roles()
    client.force_login(UserFactory(username="adm", groups=["admin"]))
    assert client.get("/signals/").status_code == 200
    assert client.get("/admin/conversations/alertrule/").status_code == 200
    listed = client.get("/admin/conversations/notification/")
    assert listed.status_code == 200
    assert "refused: " in listed.content.decode()  # each failure shown on its notification


def test_a_redirect_is_not_followed(receivers: list[Receiver]) -> None:
    hook = receiver(receivers, "redirect")
    r = rule_save(rule=rule(webhook_url=hook.url))
    n = queued(r, "webhook", hook.url)
    result = notifications_deliver(quick_retries=0)
    n.refresh_from_db()
    assert result.failed == 1 and n.delivered_at is None
    assert "redirect 302 not followed" in n.last_error
    assert hook.paths == ["/hook"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_never_answers_holds_no_transaction_and_blocks_no_one(
    receivers: list[Receiver], settings: Any
) -> None:
    settings.NOTIFY_TIMEOUT_SECONDS = 1.0
    silent, fine = receiver(receivers, "hang"), receiver(receivers)
    r1 = rule_save(rule=rule("Silent", webhook_url=silent.url))
    r2 = rule_save(rule=rule("Fine", webhook_url=fine.url))
    hung = queued(r1, "webhook", silent.url)
    ok = queued(r2, "webhook", fine.url)
    result = notifications_deliver()
    hung.refresh_from_db()
    ok.refresh_from_db()
    assert (result.delivered, result.failed) == (1, 1)
    assert ok.delivered_at is not None
    assert hung.delivered_at is None and hung.attempts == 1
    assert "no answer in 1.0 s" in hung.last_error
    assert silent.paths == ["/hook"]  # asked once in this tick, not retried at once
    assert silent.seen_in_transaction == [0]  # nobody held a transaction while it hung
    assert silent.sealed_meanwhile == [True]  # and the sealer's horizon moved on
    assert hung.next_attempt_at > timezone.now()


# --- disabled and deleted by the admin role -----------------------------------------------------


@pytest.mark.parametrize("who", ["admin role", "superuser"])
def test_a_rule_with_alerts_is_disabled_and_deleted_from_the_admin(
    client: Client, who: str
) -> None:
    roles()
    if who == "superuser":
        user = UserFactory(username="root", is_superuser=True, is_staff=True)
    else:
        user = UserFactory(username="adm", groups=["admin"])
    client.force_login(user)
    r = rule_save(rule=rule(emails="oncall@example.com"))
    queued(r, "email", "oncall@example.com")
    enabled = AlertRule.objects.filter(enabled=True).count()  # r, and the rules that ship
    assert monitoring_tick().evaluated == enabled
    page = client.post(
        "/admin/conversations/alertrule/",
        {"action": "disable_rules", "_selected_action": [r.pk]},
    )
    assert page.status_code == 302
    r.refresh_from_db()
    assert not r.enabled
    # The tick evaluates the rules left enabled, not the disabled one.
    assert monitoring_tick().evaluated == enabled - 1
    confirm = client.get(f"/admin/conversations/alertrule/{r.pk}/delete/")
    assert confirm.status_code == 200
    gone = client.post(f"/admin/conversations/alertrule/{r.pk}/delete/", {"post": "yes"})
    assert gone.status_code == 302
    assert not AlertRule.objects.filter(pk=r.pk).exists()
    assert not Notification.objects.filter(event__alert__rule_id=r.pk).exists()
    codes = list(
        AuditEvent.objects.filter(code="alert_rule.changed")
        .order_by("-id")
        .values_list("details", flat=True)[:2]
    )
    assert codes[0] == {"change": "deleted", "rule": r.pk}
    assert codes[1]["enabled"] is False
    # Nor the deleted one.
    assert monitoring_tick().evaluated == enabled - 1
    assert client.get("/admin/conversations/alertrule/").status_code == 200
