"""Prices. An exchange's price table row, read in the exchange's own query (``conversation_page``'s
``priced``): a subquery per row on the table's unique ``model``, the snapshot's row else the
alias's, as one JSON object of every column (text, so no decimal goes through a float). And
``cost_by_day``: what a set of conversations (a customer's) cost per day, priced the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db import connections
from django.db.models import OuterRef, QuerySet, Subquery, TextField
from django.db.models.functions import Cast, Coalesce, JSONObject

from ..models import Exchange, ModelPrice


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


@dataclass(frozen=True)
class CostDay:
    day: date
    cost: Decimal  # US dollars, at the price table's prices
    exchanges: int
    unpriced: int  # exchanges whose snapshot and alias have no price: not counted in ``cost``


_COST_BY_DAY = (
    "SELECT (coalesce(e.started_at, e.created_at) AT TIME ZONE %s)::date AS day, "
    "sum(CASE WHEN p.id IS NULL THEN 0 ELSE ("
    "coalesce(e.input_tokens, 0) * p.input + coalesce(e.cache_read_tokens, 0) * p.cache_read "
    "+ coalesce(e.cache_write_tokens, 0) * p.cache_write + coalesce(e.output_tokens, 0) * p.output"
    ") / 1000000 END), count(*), count(*) FILTER (WHERE p.id IS NULL) "
    "FROM {exchange} e "
    # The snapshot's row, else the alias's: as the conversation page prices one exchange.
    "LEFT JOIN LATERAL (SELECT * FROM {price} mp WHERE mp.model IN (e.response_model, "
    "e.requested_model) ORDER BY mp.model = e.response_model DESC LIMIT 1) p ON true "
    "WHERE e.conversation_id IN ({conversations}) "
    # When the call started, as the backend said, else when it was stored.
    # Up to ``until``: a time stored beyond it (a clock gone wrong, a restored row) is no day of
    # the chart, and a date past year 9999 is none Python reads.
    "AND coalesce(e.started_at, e.created_at) >= %s AND coalesce(e.started_at, e.created_at) < %s "
    "GROUP BY 1 ORDER BY 1"
)


def cost_by_day(
    *, conversations: QuerySet[Any], since: datetime, until: datetime, zone: str
) -> list[CostDay]:
    """What the exchanges of ``conversations`` from ``since`` to ``until`` cost, per day in time
    zone ``zone``: one statement over those conversations' exchanges (a customer's: the
    conversations' customer index, then each one's exchanges), never over the rollups, which
    name no customer."""
    inner, params = conversations.values("pk").query.sql_with_params()
    sql = _COST_BY_DAY.format(
        exchange=Exchange._meta.db_table, price=ModelPrice._meta.db_table, conversations=inner
    )
    # On the database the conversations are read from (a fresh replica for a page read there).
    with connections[conversations.db].cursor() as cur:
        cur.execute(sql, [zone, *params, since, until])
        return [CostDay(day, cost or Decimal(0), n, unpriced) for day, cost, n, unpriced in cur]
