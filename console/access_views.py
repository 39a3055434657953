"""The compliance page of subject access (docs/subject-access.md): a customer's (or one
conversation's) report, shown or downloaded as JSON or Markdown; and the exposure map, the same
facts for one conversation in a panel of the conversation page, for compliance staff and admins.

Presentation only: ``retention.access.subject_access_read`` checks who asks (404 for anyone but
compliance staff and admins), builds the report and audits it with the stated purpose. The form
is posted, never put in a URL: the customer id and the purpose stay out of access logs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from conversations.models import Conversation
from conversations.permissions import is_compliance, require_compliance
from retention.access import (
    AccessRefused,
    Report,
    render_json,
    render_md,
    subject_access_read,
)

PANEL_PURPOSE = "exposure map on the conversation page"


class SubjectAccessForm(forms.Form):
    customer = forms.CharField(max_length=200, help_text="the chat backend's customer id")
    conversation = forms.CharField(
        max_length=200, required=False, help_text="one of their conversations (optional)"
    )
    purpose = forms.CharField(
        max_length=300, help_text="why you ask: a request's reference, an incident (recorded)"
    )
    format = forms.ChoiceField(
        choices=[("page", "show here"), ("json", "download JSON"), ("md", "download Markdown")],
        initial="page",
    )


def _download(report: Report, fmt: str) -> HttpResponse:
    text = render_json(report) if fmt == "json" else render_md(report)
    kind = "application/json" if fmt == "json" else "text/markdown"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="subject-access-{report.audit_id}.{fmt}"'
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
def subject_access(request: HttpRequest) -> HttpResponse:
    require_compliance(request.user)
    form = SubjectAccessForm(request.POST or None)
    report: Report | None = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            report = subject_access_read(
                user=request.user,
                customer=data["customer"],
                conversation=data["conversation"] or None,
                purpose=data["purpose"],
                fmt=data["format"],
            )
        except AccessRefused as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.detail)
        except Http404:
            form.add_error("conversation", "no such conversation of this customer")
        else:
            if data["format"] in ("json", "md"):
                return _download(report, data["format"])
    response = render(request, "console/subject_access.html", {"form": form, "report": report})
    response["Cache-Control"] = "no-store"
    return response


def exposure_panel(user: Any, conversation: Conversation) -> Report | None:
    """The exposure map of one conversation for the conversation page: compliance staff and
    admins only (None for anyone else); audited like every report."""
    if not is_compliance(user):
        return None
    return subject_access_read(
        user=user,
        customer=conversation.customer_external_id,
        conversation=conversation.external_id,
        purpose=PANEL_PURPOSE,
        fmt="panel",
    )


@login_required
def conversation_exposure(request: HttpRequest, pk: int) -> HttpResponse:
    """The exposure map of one conversation, asked for by opening the conversation page's panel
    (htmx: the panel's body; without it, a page of its own). 404 for anyone but compliance staff
    and admins, as for a conversation that does not exist."""
    if not is_compliance(request.user):
        raise Http404
    conversation = get_object_or_404(Conversation, pk=pk)
    report = exposure_panel(request.user, conversation)
    partial = request.headers.get("HX-Request") == "true"
    template = "console/_exposure_body.html" if partial else "console/exposure.html"
    response = render(request, template, {"exposure": report, "conversation": conversation})
    response["Cache-Control"] = "no-store"
    return response
