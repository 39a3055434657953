"""Operational signals: what answers the questions a dashboard of the model's reasoning would be
asked, without showing any reasoning.

- ``facts.py``, ``rewrites.py``, ``buckets.py``: pure rules (per-exchange counts, how a history
  was rewritten, the fixed log-scale buckets);
- ``models.py``: the tables (registered with the ``conversations`` app);
- ``rollups.py``: hourly rollups, added by ingest and subtracted by erasure in their transactions;
- ``alerts.py``: alert rules evaluated by ``manage.py signals_tick`` (its own beat entry), the
  notifications (webhook, e-mail) kept until delivered;
- ``destinations.py``: where a notification may go (webhook hosts resolved, internal addresses
  refused unless ``NOTIFY_ALLOWED_HOSTS`` names them; names and recipients without line breaks);
- ``delivery.py``: each notification claimed, sent outside any transaction, its outcome recorded
  on it alone;
- ``reads.py``: the model page, the alert pages and the readiness report (read services: the
  audit row last);
- ``probe.py``: the two mis-sized requests of ``manage.py probe_allowance``.

To add a metric an alert can watch: a choice in ``AlertRule.Metric``, its value from summed
rollups in ``alerts.metric_value`` and the exchanges behind it in ``alerts.behind``.
"""
