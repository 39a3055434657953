"""The signals' pages: models served, a model page per snapshot and queue, alerts, the readiness
report. Presentation only: each page's data comes from one audited selector
(``conversations.monitoring.selectors.audited``), which checks the reader's queues and writes the
audit row."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from conversations.monitoring.selectors.audited import (
    alert_read,
    model_page_read,
    readiness_read,
    signals_index_read,
)


class SignalsIndexForm(forms.Form):
    """The index's query string: the page of its models-served table."""

    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)


class SignalsForm(forms.Form):
    """The query string of the signals' pages."""

    queue = forms.CharField(required=False, max_length=100)
    days = forms.IntegerField(required=False, min_value=1, max_value=366)
    model = forms.CharField(required=False, max_length=200)
    since = forms.DateField(required=False)


def _bad(request: HttpRequest, form: forms.Form) -> HttpResponse:
    errors = "; ".join(f"{name}: {' '.join(str(m) for m in e)}" for name, e in form.errors.items())
    return HttpResponse(f"Bad query: {errors}", status=400, content_type="text/plain")


def _form(request: HttpRequest) -> SignalsForm:
    return SignalsForm(request.GET)


@login_required
def signals_index(request: HttpRequest) -> HttpResponse:
    form = SignalsIndexForm(request.GET)
    if not form.is_valid():
        return _bad(request, form)
    view = signals_index_read(user=request.user, page=form.cleaned_data["page"] or 1)
    return render(request, "console/monitoring/index.html", {"view": view})


@login_required
def model_page(request: HttpRequest, snapshot: str) -> HttpResponse:
    form = _form(request)
    if not form.is_valid():
        return _bad(request, form)
    data: dict[str, Any] = form.cleaned_data
    view = model_page_read(
        user=request.user,
        snapshot="" if snapshot == "-" else snapshot,  # "-": exchanges that named no snapshot
        queue=data["queue"] or None,
        days=data["days"] or 30,
    )
    return render(request, "console/monitoring/model.html", {"view": view})


@login_required
def alert_page(request: HttpRequest, pk: int) -> HttpResponse:
    view = alert_read(user=request.user, id=pk)
    return render(request, "console/monitoring/alert.html", {"view": view})


@login_required
def readiness(request: HttpRequest) -> HttpResponse:
    form = _form(request)
    if not form.is_valid():
        return _bad(request, form)
    data: dict[str, Any] = form.cleaned_data
    since = None
    if data["since"]:
        since = timezone.make_aware(datetime.combine(data["since"], time.min))
    view = readiness_read(
        user=request.user, model=data["model"] or None, queue=data["queue"] or None, since=since
    )
    return render(request, "console/monitoring/readiness.html", {"view": view})
