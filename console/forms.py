"""Forms of the console pages: labelled controls, validated input."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.forms.renderers import Jinja2

from conversations import bounds
from conversations.selectors import FLAGS, ListFilters, conversation_cursor_valid
from conversations.selectors.listing import SORT_LABELS, SORTS
from retention.models import LegalHold


class BoundedDateField(forms.DateField):
    """A filter's day, within the window every timestamp is held to (conversations/bounds.py:
    from 2000 to the day after tomorrow): ``?until=9999-12-31`` is a form error, not a 500."""

    widget = forms.DateInput(attrs={"type": "date"})

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value is not None:
            try:
                bounds.check_day(value, bounds.Window.of(settings))
            except bounds.OutOfBounds as exc:
                raise forms.ValidationError(exc.detail, code=exc.code) from None


class CursorField(forms.CharField):
    """A keyset cursor of the list (``after``/``before``): one the list made, or a form error."""

    widget = forms.HiddenInput

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value and not any(conversation_cursor_valid(value, s) for s in ("", *SORTS)):
            raise forms.ValidationError("not a cursor of this list", code="invalid")


class ConversationFilterForm(forms.Form):
    """The list's search box and filters. Queue, model and finish reason are offered as the
    values that exist (``offer``), but any value is accepted: a model newer than the cached
    choices can still be filtered on."""

    # The list page renders its dozen widgets on every request: Django's own widget templates,
    # through Jinja2 (the same markup, a sixth of that page's time less).
    default_renderer = Jinja2()

    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        help_text="a conversation id, ticket, customer id, order id, or words of the text",
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "conversation id, ticket, customer, order id or words",
                "autocomplete": "off",
                "aria-keyshortcuts": "/",
            }
        ),
    )
    match = forms.ChoiceField(required=False, choices=[("", "")], widget=forms.HiddenInput)
    status = forms.ChoiceField(required=False, label="Status", choices=[("", "")])
    queue = forms.CharField(required=False, max_length=100, label="Queue", widget=forms.Select)
    customer = forms.CharField(required=False, max_length=200, label="Customer id")
    model = forms.CharField(
        required=False, max_length=200, label="Model snapshot", widget=forms.Select
    )
    finish = forms.CharField(
        required=False, max_length=60, label="Finish reason", widget=forms.Select
    )
    flags = forms.MultipleChoiceField(
        required=False,
        choices=list(FLAGS.items()),
        widget=forms.CheckboxSelectMultiple,
        label="Flags",
    )
    since = BoundedDateField(required=False, label="Active from")
    until = BoundedDateField(required=False, label="Active until")
    after = CursorField(required=False, max_length=200)
    before = CursorField(required=False, max_length=200)
    # The support lead's order and bounds (issue 35): in the URL like every filter, so a view is
    # a link to bookmark or share.
    sort = forms.ChoiceField(required=False, label="Sort by", choices=list(SORT_LABELS.items()))
    min_output = forms.IntegerField(
        required=False, min_value=0, max_value=2**62, label="Output tokens at least"
    )
    min_slowest = forms.IntegerField(
        required=False, min_value=0, max_value=2**31 - 1, label="Slowest answer at least (ms)"
    )
    # The rank of the page's first row, for "51 to 100 of 312" (only shown, never trusted).
    start = forms.IntegerField(
        required=False, min_value=1, max_value=10**9, widget=forms.HiddenInput
    )

    # Not filters: the cursors and the search box (its kind is audited as "match").
    NOT_FILTERS = frozenset({"q", "after", "before", "start", "match"})

    def __init__(self, *args: Any, conformance: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from conversations.models import STATUS_CHOICES

        if not conformance:
            # "History rewritten" is the backend's conformance: a console admin's filter only.
            self._choice("flags").choices = [(k, v) for k, v in FLAGS.items() if k != "rewritten"]
        from conversations.selectors.search import KINDS

        self._choice("status").choices = [("", "any"), *STATUS_CHOICES]
        self._choice("match").choices = [("", ""), *[(k, k) for k in KINDS]]

    def _choice(self, name: str) -> forms.ChoiceField:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        return field

    def offer(self, *, queues: list[str], models: list[str], finishes: list[str]) -> None:
        """The values that exist, as the select boxes' options (the current value kept)."""
        from conversations.workspace.words import finish_words

        for name, values, label in (
            ("queue", queues, str),
            ("model", models, str),
            ("finish", finishes, lambda v: f"{finish_words(v)} ({v})"),
        ):
            current = self.data.get(name, "") if self.is_bound else ""
            options = list(values)
            if current and current not in options:
                options.append(current)
            widget = self.fields[name].widget
            assert isinstance(widget, forms.Select)
            widget.choices = [("", "any"), *[(v, label(v)) for v in options]]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        sort = data.get("sort") or ""
        for name in ("after", "before"):
            cursor = data.get(name)
            if cursor and not conversation_cursor_valid(cursor, sort):
                self.add_error(name, "not a cursor of this order")
        return data

    def filters(self) -> ListFilters:
        from datetime import datetime, time, timedelta

        from django.utils import timezone

        data = self.cleaned_data
        tz = timezone.get_current_timezone()
        since = datetime.combine(data["since"], time.min, tz) if data.get("since") else None
        until = (
            datetime.combine(data["until"] + timedelta(days=1), time.min, tz)
            if data.get("until")
            else None
        )
        return ListFilters(
            queue=data.get("queue", ""),
            customer=data.get("customer", ""),
            model=data.get("model", ""),
            finish=data.get("finish", ""),
            flags=frozenset(data.get("flags") or ()),
            since=since,
            until=until,
            q=data.get("q", "").strip(),
            after=data.get("after", ""),
            before=data.get("before", ""),
            status=data.get("status", ""),
            sort=data.get("sort") or "",
            min_output=data.get("min_output"),
            min_slowest_ms=data.get("min_slowest"),
        )

    def active(self) -> bool:
        """Whether the list is narrowed (a search or a filter), for the audit row's code."""
        f = self.filters()
        return bool(
            f.q or f.queue or f.customer or f.model or f.finish or f.flags or f.since or f.until
        )


class AuditFilterForm(forms.Form):
    code = forms.ChoiceField(required=False, label="Event", choices=())
    actor = forms.CharField(required=False, max_length=150, label="Who (user name)")
    conversation = forms.IntegerField(
        required=False, min_value=1, max_value=bounds.INT64_MAX, label="Conversation #"
    )
    subject = forms.CharField(
        required=False,
        max_length=200,
        label="Customer id",
        help_text="hashed before the search; never stored",
    )
    since = BoundedDateField(required=False, label="From")
    until = BoundedDateField(required=False, label="Until")
    before = forms.IntegerField(
        required=False, min_value=1, max_value=bounds.INT64_MAX, widget=forms.HiddenInput
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from audit import EVENT_TYPES

        families = sorted({code.split(".")[0] + "." for code in EVENT_TYPES})
        field = self.fields["code"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            ("", "any"),
            *[(f, f"{f}*") for f in families],
            *[(code, code) for code in sorted(EVENT_TYPES)],
        ]


class DeletionRequestForm(forms.Form):
    """A deletion request as compliance staff type it: a customer, or conversation ids one per
    line. Checked again by the service (``DeletionInvalid`` names the field)."""

    # Ids are matched exactly, as ingest stores them: never trimmed.
    customer = forms.CharField(
        required=False,
        strip=False,
        max_length=200,
        label="Customer id",
        help_text="every conversation of theirs",
    )
    conversations = forms.CharField(
        required=False,
        strip=False,
        label="Or conversation ids",
        help_text="one per line",
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    reason = forms.CharField(max_length=300, label="Reason", help_text="e.g. GDPR art. 17 request")
    reference = forms.CharField(
        required=False, max_length=100, label="Ticket", help_text="your ticket id (optional)"
    )
    due = forms.DateField(
        required=False,
        label="Execute on",
        help_text="empty: at the next tick of the clock",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def clean_conversations(self) -> list[str]:
        lines = self.cleaned_data["conversations"].splitlines()
        ids = list(dict.fromkeys(line for line in lines if line.strip()))
        if len(ids) > 10_000:
            raise forms.ValidationError("at most 10,000 conversations per request")
        if any(len(i) > 200 for i in ids):
            raise forms.ValidationError("a conversation id has at most 200 characters")
        return ids

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("customer")) == bool(data.get("conversations")):
            raise forms.ValidationError("Name either a customer or conversations.")
        return data

    def due_at(self) -> Any:
        from datetime import datetime, time

        from django.utils import timezone

        day = self.cleaned_data.get("due")
        if day is None:
            return None
        return datetime.combine(day, time.min, timezone.get_current_timezone())


class LegalHoldForm(forms.Form):
    scope = forms.ChoiceField(choices=LegalHold.Scope.choices, label="What it covers")
    customer = forms.CharField(required=False, strip=False, max_length=200, label="Customer id")
    conversation = forms.CharField(
        required=False, strip=False, max_length=200, label="Conversation id"
    )
    queue = forms.CharField(required=False, max_length=100, label="Queue")
    reason = forms.CharField(max_length=300, label="Reason", help_text="e.g. litigation L-7")


class ReleaseForm(forms.Form):
    reason = forms.CharField(max_length=300, label="Reason for release")


class TimeZoneForm(forms.Form):
    time_zone = forms.ChoiceField(
        required=False,
        label="Time zone",
        help_text="the zone every time on your pages is shown in",
    )

    def __init__(self, *args: Any, browser: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from .preferences import zones

        follow = f"Follow my browser ({browser})" if browser else "Follow my browser"
        field = self.fields["time_zone"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", follow), *[(z, z) for z in sorted(zones())]]
