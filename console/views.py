"""Pages of the console. Presentation only: selectors read, templates show.

Until queues and object permissions exist, the pages are for staff users (admins) only; every
other user gets the same 404 as for a missing conversation.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from conversations.selectors import conversation_page, conversation_rows


def _require_staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise Http404


@login_required
def home(request: HttpRequest) -> HttpResponse:
    _require_staff(request)
    return render(request, "console/home.html", {"conversations": conversation_rows(limit=50)})


@login_required
def conversation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    _require_staff(request)
    page = conversation_page(
        pk, can_see_restricted=request.user.has_perm("conversations.view_restricted_fields")
    )
    if page is None:
        raise Http404
    return render(request, "console/conversation.html", {"page": page})
