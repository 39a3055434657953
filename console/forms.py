"""Forms of the console pages: labelled controls, validated input."""

from __future__ import annotations

from django import forms

from conversations.selectors import FLAGS, ListFilters


class ConversationFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        help_text="words of the visible (redacted) text",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "refund ORD-123"}),
    )
    queue = forms.CharField(required=False, max_length=100, label="Queue")
    customer = forms.CharField(required=False, max_length=200, label="Customer id")
    model = forms.CharField(required=False, max_length=200, label="Model snapshot")
    finish = forms.CharField(required=False, max_length=60, label="Finish reason")
    flags = forms.MultipleChoiceField(
        required=False,
        choices=list(FLAGS.items()),
        widget=forms.CheckboxSelectMultiple,
        label="Flags",
    )
    since = forms.DateField(
        required=False, label="Active from", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="Active until", widget=forms.DateInput(attrs={"type": "date"})
    )
    after = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)

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
        )

    def active(self) -> bool:
        """Whether the list is narrowed (a search or a filter), for the audit row's code."""
        f = self.filters()
        return bool(
            f.q or f.queue or f.customer or f.model or f.finish or f.flags or f.since or f.until
        )
