"""Stage 1 of ingest: the exchange parsed by its format (pure, no database).

Parsing happens before any transaction opens: it is pure and can be slow. A ``FormatError``
propagates and nothing is stored.
"""

from __future__ import annotations

from .. import formats
from ..blocks import ParsedExchange
from .body import ExchangeInput


def exchange_parse(data: ExchangeInput) -> ParsedExchange:
    """Parse with the format's module; raises FormatError for anything that does not fit."""
    return formats.get(data.format).parse(
        request=data.request,
        response=data.response,
        stream=data.stream,
        stream_base64=data.stream_base64,
        endpoint=data.endpoint,
        cancelled=data.cancelled,
    )
