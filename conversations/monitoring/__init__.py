"""Operational signals (the "monitoring" room: named so that it never reads as Django's
``signals`` module): what answers the questions a dashboard of the model's reasoning would be
asked, without showing any reasoning.

- ``facts.py``, ``rewrites.py``, ``buckets.py``, ``sketches.py``: pure rules (per-exchange
  counts, how a history was rewritten, the fixed log-scale buckets of the charts, the DDSketch
  bins the quantiles are read from);
- ``metrics.py``: what an alert can watch, one registered entry per metric;
- ``destinations.py``: where a notification may go (webhook hosts resolved, internal addresses
  refused unless ``NOTIFY_ALLOWED_HOSTS`` names them; names and recipients without line breaks);
- ``delivery.py``: each notification claimed, sent outside any transaction, its outcome recorded
  on it alone;
- ``models.py``: the tables (registered with the ``conversations`` app);
- ``rollups.py``: hourly rollups, added by ingest and subtracted by erasure in their transactions;
- ``alerts.py``: alert rules evaluated by ``manage.py monitoring_tick`` (its own beat entry), the
  notifications (webhook, e-mail) kept until delivered;
- ``selectors/``: the rollups summed and counted (``__init__``), and ``audited.py``: the model
  page, the alert pages and the readiness report (each checks access and writes its audit row
  last);
- ``probe.py``: the two mis-sized requests of ``manage.py probe_allowance``.

To add a metric an alert can watch: one ``AlertMetric`` in ``metrics.METRICS`` (its value from
summed rollups, its words, its detail, the exchanges behind a breach) and its case in
``tests/monitoring/test_metrics.py``; a value the rollups do not count yet needs its column in
``rollups.py`` (``SUMS``, ``contribute``) and a migration first.
"""
