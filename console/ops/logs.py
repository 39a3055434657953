"""Logs: each record carries the id of the request it was written in (``request_id``, empty
outside a request), set by ``OpsMiddleware`` from the ``X-Request-ID`` a proxy sent or made
fresh. With ``LOG_FORMAT=json`` (console/settings.py) every line is one JSON object
(python-json-logger): ``time``, ``level``, ``logger``, ``message``, ``request_id`` and the
record's extras; the request line (logger ``console.request``) gives the method, the route's
name, the status and the duration, never a path with its ids, a query string or a body."""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar

request_id: ContextVar[str] = ContextVar("console_request_id", default="")


class RequestIdFilter(logging.Filter):
    """Adds ``request_id``; takes away the request Django attaches to its ``django.request``
    records, whose text (a JSON formatter writes it) holds the path and the query string."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = request_id.get()
        if "request" in record.__dict__:
            del record.__dict__["request"]
        return True


# A share link's path, whose last segment is the token that opens it (console/urls.py: s/<token>/).
_SHARE_PATH = re.compile(r"/s/[^/?#\s\"']+")
MASKED = "/s/[token]"
# The loggers that write a request's path: the servers' access lines and Django's request
# warnings and errors. A filter on each (``ShareTokenFilter``), installed at start-up
# (``console/apps.py``) on the logger objects, so gunicorn's and uvicorn's own handlers keep them.
PATH_LOGGERS = ("uvicorn.access", "gunicorn.access", "django.request", "django.server")


def mask_share_tokens(text: str) -> str:
    return _SHARE_PATH.sub(MASKED, text)


class ShareTokenFilter(logging.Filter):
    """Masks a share link's token wherever a record holds a path: its message and its arguments
    (uvicorn's tuple, gunicorn's atoms: a mapping, changed in place so that its own lookups of
    headers still work)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "/s/" in record.msg:
            record.msg = mask_share_tokens(record.msg)
        args = record.args
        if isinstance(args, dict):
            for k, v in list(args.items()):
                if isinstance(v, str) and "/s/" in v:
                    args[k] = mask_share_tokens(v)
        elif isinstance(args, tuple):
            record.args = tuple(
                mask_share_tokens(a) if isinstance(a, str) and "/s/" in a else a for a in args
            )
        return True


def install_share_token_filter() -> None:
    """Once per process (a second call adds nothing)."""
    for name in PATH_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ShareTokenFilter) for f in logger.filters):
            logger.addFilter(ShareTokenFilter())
