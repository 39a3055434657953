"""Live conversations (DESIGN section 10): a provider stream watched while it streams.

- ``filters/``: the inbound filter's engine: raw SSE text in any cut, visible events out (pure;
  what each event of a format means is that format's live filter, ``formats/<name>/live.py``,
  read from the registry; the classes are the stored formats' own).
- ``holdback.py``: streamed text redacted by the one pipeline, held back so a finding cut across
  deltas never leaves in part (pure).
- ``state.py``: one exchange's filter state in Redis (types and counts in the clear, held text
  encrypted with the conversation's data key, expiring), ordering by ``seq``, pub/sub.
- ``hub.py``: the Redis side of the console's SSE stream: one pub/sub connection per event loop
  shared by its viewers, the kept events replayed after ``Last-Event-ID``, keepalives.
- ``services.py``: ``live_chunk_ingest`` (the API's write) and ``live_exchange_close``.
"""
