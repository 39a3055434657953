"""Ingest: one provider exchange (or a batch of them) on its way into the store.

``pipeline.ingest_batch`` calls the stages in order; its docstring is the map. The modules:

- ``body.py``: the ingest body, one definition that checks it and documents it (OpenAPI).
- ``parse.py``: stage 1, the exchange parsed by its format (``formats/``).
- ``history.py``: stage 2, the history sent matched against the history stored.
- ``project.py``: stage 3, the new blocks projected and redacted (``projection/``).
- ``encrypt.py``: stage 4, the verbatim store sealed with the conversation's data key.
- ``store.py``: stage 5, the rows written (and the conversations locked, what they hold read).
- ``guards.py``: checks other apps register that may refuse an exchange (retention's tombstones),
  the ingest lock and the barrier an erasure passes.
- ``errors.py``: ``IngestConflict``.

Import the module you need (``from conversations.ingest.pipeline import ingest_batch``): this
package's ``__init__`` imports nothing, so loading one stage loads no other.
"""
