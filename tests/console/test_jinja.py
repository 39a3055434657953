"""The Jinja2 parts of the pages (console/jinja.py) write what Django's templates wrote: the
same dates in the viewer's zone, the same plurals, and nothing fails on a missing value."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.template import engines
from django.urls import get_script_prefix, set_script_prefix
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from console import jinja

# Every format the Jinja2 templates use, and a few that take Django's own path.
FORMATS = ["c", "Y-m-d H:i T", "Y-m-d H:i:s T", "M j, H:i", "Y-m-d H:i", "N j, Y", r"\Y H", "D, P"]
ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]


def django_date(value: object, fmt: str) -> str:
    return engines["django"].from_string("{{ v|date:f }}").render({"v": value, "f": fmt})


@settings(max_examples=300, deadline=None)
@given(
    at=st.datetimes(
        min_value=datetime(1990, 1, 1), max_value=datetime(2060, 1, 1), timezones=st.just(UTC)
    ),
    fmt=st.sampled_from(FORMATS),
    zone=st.sampled_from(ZONES),
)
def test_date_matches_djangos_filter_in_the_active_zone(at: datetime, fmt: str, zone: str) -> None:
    with timezone.override(zone):
        assert jinja.date(at, fmt) == django_date(at, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_date_of_a_daylight_saving_change_and_of_plain_dates(fmt: str) -> None:
    # 2026-03-29 01:30 UTC: Paris moves from CET to CEST at 01:00 UTC
    change = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
    with timezone.override("Europe/Paris"):
        for at in (change, change + timedelta(hours=1)):
            assert jinja.date(at, fmt) == django_date(at, fmt)
    if "H" not in fmt and "P" not in fmt and fmt != "c" and "T" not in fmt:
        assert jinja.date(date(2026, 2, 3), fmt) == django_date(date(2026, 2, 3), fmt)


def test_date_of_nothing_is_empty() -> None:
    assert jinja.date(None, "c") == django_date(None, "c") == ""
    assert jinja.date("", "c") == ""
    assert jinja.date("not a date", "c") == django_date("not a date", "c") == ""


@pytest.mark.parametrize("value", [0, 1, 2, [], [1], [1, 2], "x", None])
def test_pluralize_matches_djangos(value: object) -> None:
    dtl = engines["django"].from_string("{{ v|pluralize }}").render({"v": value})
    assert jinja.pluralize(value) == dtl


def test_a_missing_value_renders_as_nothing() -> None:
    part = engines["jinja2"].from_string("[{{ call.result.status }}|{{ gone|date('c') }}]")
    assert part.render({"call": None}) == "[|]"


def test_text_is_escaped_and_safe_markup_is_not() -> None:
    part = engines["jinja2"].from_string("{{ text }} {{ answer|markdown }}")
    html = part.render({"text": "<b>&", "answer": "**bold** <script>"})
    assert html.startswith("&lt;b&gt;&amp; <p><strong>bold</strong> &lt;script&gt;")


def test_url_follows_the_script_prefix() -> None:
    old = get_script_prefix()
    try:
        assert jinja.url("conversation-detail", 7) == "/conversations/7/"
        set_script_prefix("/console/")
        assert jinja.url("conversation-detail", 7) == "/console/conversations/7/"
        assert jinja.url("conversation-call", 7, "3-1") == "/console/conversations/7/calls/3-1/"
    finally:
        set_script_prefix(old)
