"""One ingest body per format, shown on the OpenAPI page beside the schema of ``body.py``: each
format's kit declares its own (``formats/<name>/kit.py``, ``example``).

``tests/conversations/test_ingest_body.py`` posts each one (each must be stored: 201), so the
page never shows a body the API refuses.
"""

from __future__ import annotations

from typing import Any

from ..formats import formats

EXAMPLES: dict[str, dict[str, Any]] = {fmt.name: dict(fmt.kit.example) for fmt in formats()}
