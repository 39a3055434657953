"""Pages of the console. Presentation only: each page's data comes from one audited selector
(``conversations.selectors.audited``, ``retention.selectors.audited``), which checks access (404 for
a page one may not see, like a missing one), reads, and writes the audit row in its own transaction;
the view validates the query string, calls it, and renders what it returned after that transaction
has committed. No view here opens a transaction or writes to the audit log itself.

Partial updates: a request from htmx (``request.htmx``, the vendored script in
``static/console/vendor/``) for the list or a tool call gets only the fragment it swaps in; the
same URL without htmx is the full page, so every link and form works without JavaScript.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from audit.readable import details_text
from conversations.models import ReviewGrant
from conversations.permissions import (
    can_read_conversations,
    is_compliance,
    is_console_admin,
    require_compliance,
    require_reader,
)
from conversations.selectors import FLAGS
from conversations.selectors.audited import (
    conversation_list_read,
    conversation_read,
    tool_call_read,
)
from conversations.selectors.folded import turn_parts_read
from conversations.selectors.listing import SORT_LABELS
from conversations.selectors.search import KIND_LABELS
from retention.selectors.audited import audit_log_read, open_requests_read

from .forms import AuditFilterForm, ConversationFilterForm, TimeZoneForm
from .markdown import render_markdown
from .people.selectors import queue_granters
from .people.views import no_role
from .preferences import COOKIE, chosen_zone, remember_zone, user_preference_update, valid_zone

PAGE = 50


def _with(request: HttpRequest, **params: str) -> str:
    """The current query string with ``params`` replaced (an empty value drops the parameter):
    a pager's or a tab's link."""
    query = request.GET.copy()
    for name, value in params.items():
        if value:
            query[name] = value
        else:
            query.pop(name, None)
    return query.urlencode()


def _partial(request: HttpRequest) -> bool:
    """Whether htmx asked for a fragment to swap in (not a history restore, which wants the
    whole page)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.history_restore_request


def _fragment_aware(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    # One URL, two renderings: caches must tell them apart.
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The conversation list: the search box, filters, the awaiting-a-person view, paging both
    ways. A pasted conversation id (or a ticket only one conversation has) goes straight to it."""
    if not can_read_conversations(request.user) and is_compliance(request.user):
        return redirect("audit-log")  # compliance staff start at the audit log
    if not can_read_conversations(request.user) and not is_compliance(request.user):
        return no_role(request)  # signed in (e.g. through the provider) with no role yet
    conformance = is_console_admin(request.user)  # the "rewritten" flag: admins only
    form = ConversationFilterForm(request.GET, conformance=conformance)
    partial = _partial(request)
    template = "console/_results.html" if partial else "console/home.html"
    context: dict[str, Any] = {"form": form, "rows": [], "flags": FLAGS, "kinds": KIND_LABELS,
                               "conformance": conformance}  # fmt: skip
    # The filters stay open while one is set (the search box alone keeps them folded).
    context["filtered"] = any(name not in form.NOT_FILTERS for name in form.changed_data)
    if not form.is_valid():
        require_reader(request.user)  # the form's errors only to those who may see the page
        form.offer(queues=[], models=[], finishes=[])
        return _fragment_aware(request, render(request, template, context, status=400))
    used = [name for name in form.changed_data if name not in form.NOT_FILTERS]
    listing = conversation_list_read(
        user=request.user, filters=form.filters(), used=used, limit=PAGE,
        match=form.cleaned_data["match"],
    )  # fmt: skip
    if listing.go_to is not None:
        target = reverse("conversation-detail", args=[listing.go_to])
        return HttpResponseClientRedirect(target) if partial else redirect(target)
    form.offer(
        queues=listing.queues,
        models=listing.choices.get("model", []),
        finishes=listing.choices.get("finish", []),
    )
    start = form.cleaned_data["start"] or 1
    rows = listing.rows
    if not listing.queues and not conformance:
        # No queue granted: the list says so once, and who can grant one (issue 35).
        context["no_queue"] = True
        context["granters"] = queue_granters()
    context.update(
        rows=[(c, listing.extras.get(c.pk)) for c in rows],
        found=listing.found,
        query=form.cleaned_data["q"].strip(),
        total=listing.total,
        capped=listing.total is not None and listing.total > 1000,
        awaiting=listing.awaiting,
        awaiting_capped=listing.awaiting > 1000,
        first=start if rows else 0,
        last=start + len(rows) - 1,
        status=form.cleaned_data["status"],
        sort_label=SORT_LABELS.get(form.cleaned_data["sort"] or "", SORT_LABELS[""]),
        all_query=_with(request, status="", after="", before="", start=""),
        awaiting_query=_with(request, status="escalated", after="", before="", start=""),
    )
    context["export_query"] = _with(request, after="", before="", start="")
    if listing.next_cursor:
        context["next_query"] = _with(
            request, after=listing.next_cursor, before="", start=str(start + len(rows))
        )
    if listing.newer_cursor:
        context["prev_query"] = _with(
            request, before=listing.newer_cursor, after="", start=str(max(1, start - PAGE))
        )
    if listing.found is not None:
        context["also"] = [
            (kind, KIND_LABELS[kind], _with(request, match=kind, after="", before="", start=""))
            for kind in listing.found.also
        ]
    return _fragment_aware(request, render(request, template, context))


@login_required
def conversation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    # ?exchange=<id>: the path of that exchange (another branch of the conversation).
    exchange = request.GET.get("exchange")
    if exchange is not None and not (exchange.isascii() and exchange.isdigit()
                                     and 0 < int(exchange) < 2**63):  # fmt: skip
        return HttpResponse(
            "exchange must be an exchange id", status=400, content_type="text/plain"
        )
    view = conversation_read(
        user=request.user, id=pk, exchange=int(exchange) if exchange is not None else None
    )
    customer = view.customer
    # The customer panel's open deletion requests (retention's, which conversations never reads):
    # by the customer's keyed hash or one of the conversations the panel lists.
    deletions = (
        open_requests_read(
            user=request.user,
            customer=customer.customer,
            conversation_ids=[pk, *(c.pk for c in customer.others)],
        )
        if customer is not None
        else []
    )
    return render(
        request,
        "console/conversation.html",
        {
            "page": view.page,
            "conversation": view.page.conversation,
            "can_review": view.can_review,
            "timeline": view.timeline,
            "ticket": view.ticket,
            "share_links": view.share_links,
            # The exposure map (retention/access/): compliance staff and admins only.
            # Loaded when opened (access_views.conversation_exposure): each report is an audit row
            # and some thirty queries, which a page view should not pay for a closed panel.
            "exposure": is_compliance(request.user),
            "waterfall": view.waterfall,
            "customer": customer,
            "deletions": deletions,
            "is_compliance": is_compliance(request.user),
            "can_ask_review": view.can_ask_review,
            "review_request": view.review_request,
            "review_purposes": ReviewGrant.Purpose.choices,
            "branch_links": view.branch_links,
            # The backend's conformance (a rewritten history, its price): admins only.
            "conformance": view.conformance,
        },
    )


# The live view's Markdown (static/console/live.js): the answer streamed so far, at most this long.
MARKDOWN_MAX = 200_000


@login_required
@require_POST
def live_markdown(request: HttpRequest) -> HttpResponse:
    """Render the live view's streaming answer with the page's own sanitiser
    (``console/markdown.py``), so the text in flight reads as it will once stored and never as
    raw HTML. The text is what the live stream already published to this reader (redacted by
    the server's filter); nothing is read or kept here."""
    require_reader(request.user)
    text = request.POST.get("text")
    if text is None or len(text) > MARKDOWN_MAX:
        detail = "text is required" if text is None else f"text is over {MARKDOWN_MAX} characters"
        return HttpResponse(
            json.dumps({"error": "invalid", "detail": detail, "field": "text", "at": "$.text"}),
            status=400,
            content_type="application/json",
        )
    response = HttpResponse(render_markdown(text), content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-store, private"
    return response


@login_required
def tool_call(request: HttpRequest, pk: int, call: str) -> HttpResponse:
    """One tool call in full: the fragment the trail's "Details" swaps in, or a page of its own
    without JavaScript."""
    view = tool_call_read(user=request.user, id=pk, call=call)
    template = "console/_call_details.html" if _partial(request) else "console/call_detail.html"
    context = {"conversation": view.conversation, "call": view.call}
    return _fragment_aware(request, render(request, template, context))


@login_required
def turn_parts(request: HttpRequest, pk: int, turn: str) -> HttpResponse:
    """The folded calls of a long turn (``conversations/workspace/folds.py``), a chunk from
    ``?from=``: the fragment the fold's link swaps in, or a page of its own without JavaScript."""
    start = request.GET.get("from", "")
    if not (start.isascii() and start.isdigit() and len(start) < 10):
        return HttpResponse("from must be a part number", status=400, content_type="text/plain")
    view = turn_parts_read(user=request.user, id=pk, turn=turn, start=int(start))
    template = "console/_turn_parts.html" if _partial(request) else "console/turn_parts.html"
    return _fragment_aware(request, render(request, template, {"view": view}))


@login_required
def preferences(request: HttpRequest) -> HttpResponse:
    """The user's own settings: the time zone of their pages (default: their browser's)."""
    browser = valid_zone(request.COOKIES.get(COOKIE))
    form = TimeZoneForm(request.POST or None, browser=browser)
    if request.method == "POST" and form.is_valid():
        zone = form.cleaned_data["time_zone"]
        user_preference_update(user=request.user, time_zone=zone)
        remember_zone(request, zone)
        messages.success(
            request, f"Times are now shown in {zone}." if zone else "Times follow your browser."
        )
        return redirect("preferences")
    if not form.is_bound:
        form.initial = {"time_zone": chosen_zone(request)}
    return render(request, "console/preferences.html", {"form": form, "browser": browser})


def _day_start(day: date | None, *, shift: int = 0) -> datetime | None:
    """The start of ``day`` (plus ``shift`` days) in the current time zone."""
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=shift), time.min, timezone.get_current_timezone())


def _audit_read(request: HttpRequest, form: AuditFilterForm, export: str | None = None) -> Any:
    data = form.cleaned_data
    return audit_log_read(
        user=request.user,
        code=data["code"] or None,
        actor_username=data["actor"] or None,
        conversation_id=data["conversation"],
        subject=data["subject"] or None,
        since=_day_start(data["since"]),
        until=_day_start(data["until"], shift=1),
        before=data["before"],
        used=[name for name in form.changed_data if name != "before"],
        export=export,
    )


@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    """Compliance staff browse the audit log, newest first, with filters; 100 rows a page."""
    form = AuditFilterForm(request.GET)
    context: dict[str, Any] = {"form": form, "rows": []}
    if not form.is_valid():
        require_compliance(request.user)
        return render(request, "console/audit.html", context, status=400)
    log = _audit_read(request, form)
    context["rows"] = log.rows
    context["export_query"] = _with(request, before="")
    if log.older_than is not None:
        context["older"] = _with(request, before=str(log.older_than))
    return render(request, "console/audit.html", context)


AUDIT_COLUMNS = (
    "id", "at", "code", "actor", "conversation_id", "subject_hash", "details", "details_text",
)  # fmt: skip
# Spreadsheets run a cell that starts with one of these as a formula: such cells get a quote.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def csv_response(name: str, header: list[str], rows: list[list[Any]]) -> HttpResponse:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return response


def json_response(name: str, body: Any) -> HttpResponse:
    response = HttpResponse(
        json.dumps(body, ensure_ascii=False, indent=2, default=str),
        content_type="application/json; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response


@login_required
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The audit log's rows the filters select, as CSV or JSON (up to 10,000 from ``before``
    down; the ``Link`` header names the next part). Audited like a page of the log."""
    if fmt not in ("csv", "json"):
        raise Http404("no such format")
    form = AuditFilterForm(request.GET)
    if not form.is_valid():
        require_compliance(request.user)
        return HttpResponse(
            json.dumps({"error": "invalid", "detail": form.errors.get_json_data()}),
            status=400,
            content_type="application/json",
        )
    log = _audit_read(request, form, export=fmt)
    name = f"audit-log-{timezone.localdate():%Y%m%d}"
    rows = [
        {
            "id": e.pk,
            "at": e.at.isoformat(),
            "code": e.code,
            "actor": e.actor_label,
            "conversation_id": e.conversation_id,
            "subject_hash": e.subject_hash,
            "details": e.details,
            "details_text": details_text(e.details),
        }
        for e in log.rows
    ]
    if fmt == "json":
        response = json_response(name, {"rows": rows, "next_before": log.older_than})
    else:
        header = list(AUDIT_COLUMNS)
        response = csv_response(
            name,
            header,
            [
                [json.dumps(r[k], ensure_ascii=False) if k == "details" else r[k] for k in header]
                for r in rows
            ],
        )
    if log.older_than is not None:
        response["Link"] = f'<?{_with(request, before=str(log.older_than))}>; rel="next"'
    return response
