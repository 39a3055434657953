"""Ingest: one provider exchange (or a batch of them) on its way into the store."""
