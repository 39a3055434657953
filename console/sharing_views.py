"""Pages of what leaves the console (``conversations/sharing/``): the export download, making
and revoking share links, the public share page, the compliance list of links. Presentation
only: the audited selectors and the services do the reading, the writing and the audit rows.

The share page is opened without login by whoever holds the link: it is never cached
(``no-store``), never indexed (``X-Robots-Tag`` and the page's ``robots`` meta), sends no
referrer onwards (``Referrer-Policy: no-referrer``), and is rate-limited per client address and
per link in the shared cache (``SHARE_RATE_LIMIT`` openings a minute, 429 beyond).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from conversations.sharing.links import ShareRefused, max_days
from conversations.sharing.ratelimit import hit
from conversations.sharing.selectors import (
    conversation_export_read,
    share_link_made_read,
    share_links_read,
    share_open_read,
)
from conversations.sharing.services import share_link_create, share_link_revoke

from .hardening import client_address
from .preferences import COOKIE, valid_zone

GONE = {"expired": "This link has expired.", "revoked": "This link was revoked.",
        "erased": "This conversation was deleted.",
        "withdrawn": "This link is no longer valid: whoever shared it can no longer open the "
                     "conversation."}  # fmt: skip


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store, private"
    response["X-Robots-Tag"] = "noindex, nofollow, noarchive"
    response["Referrer-Policy"] = "no-referrer"
    return response


@login_required
def conversation_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The conversation as text (md, txt, json), as this person sees it, in their zone."""
    export = conversation_export_read(
        user=request.user, id=pk, fmt=fmt, zone=getattr(request, "time_zone", None)
    )
    response = HttpResponse(export.text, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["Cache-Control"] = "no-store, private"
    return response


@login_required
@require_POST
def share_create(request: HttpRequest, pk: int) -> HttpResponse:
    """Make a link, then redirect to the page that shows it (POST, redirect, GET: reloading
    that page shows the same link and makes no other)."""
    raw = request.POST.get("days", "").strip()
    try:
        days = int(raw) if raw else None
    except ValueError:
        days = -1
    try:
        link, _token = share_link_create(actor=request.user, conversation_id=pk, days=days)
    except ShareRefused as exc:
        messages.error(request, f"{exc.field}: {exc.detail}")
        return redirect("conversation-detail", pk)
    return redirect("share-made", pk, link.pk)


@login_required
def share_made(request: HttpRequest, pk: int, link: int) -> HttpResponse:
    """The link just made, shown to its maker (read again from the link's sealed token)."""
    made = share_link_made_read(user=request.user, conversation_id=pk, link_id=link)
    token = getattr(made, "token", "")
    url = request.build_absolute_uri(reverse("share-page", args=[token])) if token else ""
    context = {"link": made, "url": url, "pk": pk, "state": getattr(made, "current", "")}
    return _private(render(request, "console/share_created.html", context))


@login_required
@require_POST
def share_revoke(request: HttpRequest, link: int) -> HttpResponse:
    revoked = share_link_revoke(actor=request.user, link_id=link)
    messages.success(request, f"Share link {revoked.pk} revoked.")
    back = request.POST.get("next", "")
    if back == "compliance":
        return redirect("share-links")
    return redirect("conversation-detail", revoked.conversation_id)


def share_page(request: HttpRequest, token: str) -> HttpResponse:
    """The public, read-only transcript of a share link (no login)."""
    limit = int(getattr(settings, "SHARE_RATE_LIMIT", 60))
    address = client_address(request)  # FORWARDED_ALLOW_IPS applied, as for sign-in
    if not (
        hit("share-ip", address, limit=limit, window=60)
        and hit("share-link", token, limit=limit, window=60)
    ):
        response = HttpResponse("Too many requests: try again in a minute.", status=429,
                                content_type="text/plain; charset=utf-8")  # fmt: skip
        response["Retry-After"] = "60"
        return _private(response)
    # The viewer's zone, from the cookie their browser set on an earlier opening (the page's
    # script shows times in it even on the first).
    shared = share_open_read(token=token, zone=valid_zone(request.COOKIES.get(COOKIE)))
    if shared.state == "unknown":
        return _private(render(request, "console/shared_gone.html", {"why": "No such link."},
                               status=404))  # fmt: skip
    if shared.state != "live":
        return _private(render(request, "console/shared_gone.html",
                               {"why": GONE[shared.state]}, status=410))  # fmt: skip
    return _private(render(request, "console/shared.html",
                           {"t": shared.transcript, "expires_at": shared.expires_at}))  # fmt: skip


@login_required
def share_links(request: HttpRequest) -> HttpResponse:
    """Compliance: the share links of the last 30 days and every live one."""
    rows = share_links_read(user=request.user)
    return render(request, "console/share_links.html", {"rows": rows, "max_days": max_days()})
