"""Logs: each record carries the id of the request it was written in (``request_id``, empty
outside a request), set by ``OpsMiddleware`` from the ``X-Request-ID`` a proxy sent or made
fresh. With ``LOG_FORMAT=json`` (console/settings.py) every line is one JSON object
(python-json-logger): ``time``, ``level``, ``logger``, ``message``, ``request_id`` and the
record's extras; the request line (logger ``console.request``) gives the method, the route's
name, the status and the duration, never a path with its ids, a query string or a body."""

from __future__ import annotations

import logging
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
