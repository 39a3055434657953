"""The keystore: encryption at rest and the per-conversation data keys.

- ``crypto.py``: pure envelope encryption (AES-GCM): master keys wrap data keys, data keys seal
  values, associated data naming the conversation, the row and the field.
- ``keys.py``: the data keys, wrapped, in the ``keys`` database: found, created, destroyed (the
  first step of every erasure), re-wrapped under a new master key; ``encrypt_message`` /
  ``decrypt_message`` for the verbatim store.
- ``routers.py``: the database router that keeps ``DataKey`` rows in the ``keys`` database.

This package imports no model at import time (``console/settings.py`` names the router), so keep
``__init__`` free of imports. To add an encrypted column: give it associated data of its own in
``keys.py`` (``<table>_aad``), so a ciphertext moved to another row or field fails to decrypt.
"""
