"""An exchange's price table row, read in the exchange's own query (``conversation_page``'s
``priced``): a subquery per row on the table's unique ``model``, the snapshot's row else the
alias's, as one JSON object of every column (text, so no decimal goes through a float)."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Subquery, TextField
from django.db.models.functions import Cast, Coalesce, JSONObject

from ..models import ModelPrice


def _row_of(column: str) -> Subquery:
    fields = {f.attname: Cast(f.attname, TextField()) for f in ModelPrice._meta.concrete_fields}
    return Subquery(
        ModelPrice.objects.filter(model=OuterRef(column)).values(row=JSONObject(**fields))[:1]
    )


def price_row() -> Coalesce:
    """The annotation: the row of the exchange's snapshot (``response_model``), else of the
    model it asked for (``requested_model``), else NULL."""
    return Coalesce(_row_of("response_model"), _row_of("requested_model"))


def price_from_row(row: dict[str, Any] | None) -> ModelPrice | None:
    """The annotation back as a ``ModelPrice`` (not saved again: read only)."""
    if row is None:
        return None
    values = {
        f.attname: None if row.get(f.attname) is None else f.to_python(row[f.attname])
        for f in ModelPrice._meta.concrete_fields
    }
    return ModelPrice(**values)
