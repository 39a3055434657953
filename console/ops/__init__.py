"""Operations: what the people who run the console hold it by (DESIGN section 17).

- ``health.py``: ``/healthz`` (the process answers; no dependency asked) and ``/readyz`` (each
  check of ``CHECKS``: both databases, Redis, the beat's heartbeat, the audit sealer's lag; 503
  naming what fails). Cheap, unauthenticated, and they say nothing but names and states.
- ``metrics.py``: ``/metrics`` in Prometheus' text format, for a token of scope ``metrics`` or a
  peer in ``METRICS_ALLOWED_IPS``. What a request or a stream changes is counted in the process
  (prometheus-client; its multiprocess mode sums the web workers when ``PROMETHEUS_MULTIPROC_DIR``
  is set); what the database and Redis hold (the sealer's lag, the deletion queue, notifications,
  Celery's queue) is read at scrape time. No label names a customer or a conversation.
- ``middleware.py``: ``OpsMiddleware``, first in ``MIDDLEWARE``: answers the three paths above
  before the host and HTTPS checks (a probe addresses the process by its own address), gives each
  request an id (``X-Request-ID``), times it per route name, counts ingest outcomes from the API's
  answers, opens the replica scope for the reading pages (``conversations/replicas.py``) and
  raises the replicas' fence after a human write.
- ``logs.py``: the request id on every log record; ``LOG_FORMAT=json`` for one JSON object a line.
- ``beat.py``: the beat's scheduler, which writes the heartbeat ``/readyz`` reads.

To add a readiness check: a ``Check`` in ``health.CHECKS`` (a name, and a function returning
``None`` when fine or a short reason) and its name in ``READY_CHECKS_KNOWN`` (and in
``READY_CHECKS``'s default only when this process cannot serve without it). To add a
metric: counted in the process, declare it in ``metrics.py`` and count it where it happens (one
line); read from a store, add it to ``StoreCollector.collect``. ``tests/ops/test_metrics.py``
walks every family the scrape returns.
"""
