"""The admin's forms say what exists (issue 35): an alert rule chooses its queue and snapshot
from those that exist (a rule for "biling" is refused, naming the field; one saved before keeps
its value, said plainly to match nothing yet); prices name their currency."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from conversations.models import AlertRule, ModelPrice
from conversations.monitoring.alerts import rule_save
from tests.factories import ExchangeBodyFactory, ingest

pytestmark = pytest.mark.django_db(databases="__all__")

SNAPSHOT = "claude-sonnet-4-5-20250929"


@pytest.fixture
def admin_client() -> Client:
    call_command("setup_roles", stdout=io.StringIO())
    ingest(ExchangeBodyFactory(conversation="c-1", queue="billing", response_model=SNAPSHOT))
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    return client


def _rule(**fields: Any) -> dict[str, Any]:
    return {
        "name": "refusals",
        "metric": "refusal_rate",
        "queue": "",
        "snapshot": "",
        "window_minutes": 60,
        "threshold": 0.1,
        "min_exchanges": 5,
        "enabled": "on",
        **fields,
    }


def _options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no select for {name}"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_a_rule_chooses_a_queue_and_snapshot_that_exist(admin_client: Client) -> None:
    form = admin_client.get("/admin/conversations/alertrule/add/").content.decode()
    assert _options(form, "queue") == ["", "billing"]
    assert _options(form, "snapshot") == ["", SNAPSHOT]
    refused = admin_client.post("/admin/conversations/alertrule/add/", _rule(queue="biling"))
    assert refused.status_code == 200  # the form again, with the error on the field
    assert "Select a valid choice. biling is not one of the available choices." in (
        refused.content.decode()
    )
    assert not AlertRule.objects.filter(name="refusals").exists()
    made = admin_client.post(
        "/admin/conversations/alertrule/add/", _rule(queue="billing", snapshot=SNAPSHOT)
    )
    assert made.status_code == 302, made.content
    rule = AlertRule.objects.get(name="refusals")
    assert (rule.queue, rule.snapshot) == ("billing", SNAPSHOT)


def test_a_rule_naming_nothing_says_so_and_keeps_its_value(admin_client: Client) -> None:
    old = rule_save(rule=AlertRule(**{**_rule(queue="biling"), "enabled": True}))
    page = admin_client.get(f"/admin/conversations/alertrule/{old.pk}/change/").content.decode()
    assert "biling (matches nothing yet)" in page
    listing = admin_client.get("/admin/conversations/alertrule/").content.decode()
    assert "queue &#x27;biling&#x27; matches nothing yet" in listing
    assert "exists" in listing  # the shipped rules watch each queue and snapshot


def test_prices_name_their_currency(admin_client: Client) -> None:
    form = admin_client.get("/admin/conversations/modelprice/add/").content.decode()
    for label in ("Input", "Cache read", "Cache write", "Output, reasoning included"):
        assert f"{label} (USD per million tokens)" in form, label
    ModelPrice.objects.create(
        model=SNAPSHOT, input="3", cache_read="0.3", cache_write="3.75", output="15"
    )
    listing = admin_client.get("/admin/conversations/modelprice/").content.decode()
    assert "input (USD / M tokens)" in listing.replace("Input", "input")
    assert "$15.0000" in listing and "$3.7500" in listing


def test_a_negative_price_is_refused_by_the_form_and_by_the_table(admin_client: Client) -> None:
    from django.db import IntegrityError, transaction

    body = {
        "model": SNAPSHOT,
        "input": "-5",
        "cache_read": "0.3",
        "cache_write": "0",
        "output": "-1",
    }
    refused = admin_client.post("/admin/conversations/modelprice/add/", body)
    assert refused.status_code == 200  # the form again, with its errors
    errors = refused.context["adminform"].form.errors
    assert set(errors) == {"input", "output"}
    assert "a price is not negative" in refused.content.decode()
    assert not ModelPrice.objects.exists()
    with pytest.raises(IntegrityError, match="model_price_not_negative"), transaction.atomic():
        ModelPrice.objects.create(model=SNAPSHOT, input=-5, cache_read=0, cache_write=0, output=1)
