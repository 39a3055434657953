"""The projection: what of a stored block a human surface may show (DESIGN section 4).

- ``classes.py``: the storage classes (identifier, status, display, restricted, drop), defined
  once; the model's choices are built from them.
- ``project.py``: the one projection, ``project_blocks`` (a message's blocks to Block rows, tool
  results named from their calls), and ``view_fields`` (what one person may see of them).
- ``redaction/``: the one redaction pipeline (cards, IBANs, e-mail, phones, SSNs, secrets, IPs).
- ``policies.py``: the field policies in force, cached per process, invalidated through Redis.
- ``stored.py``: the blocks of stored messages, decrypted and parsed again.
- ``reproject.py``: a conversation's Block rows rebuilt under new policies (the job a policy
  change enqueues).

``classes``, ``project`` and ``redaction`` hold no model and reach no database (an import
contract in pyproject.toml); this ``__init__`` imports nothing.
"""
