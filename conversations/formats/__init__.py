"""Provider formats: pure parsing and protocol data, no Django model (DESIGN sections 3 and 14).

One package per format (``anthropic/``, ``openai_responses/``, ``openai_chat/``, ``ai_sdk/``),
each with its parser, its live filter and its profile, registered by the package's
``__init__.py`` (``registry.py`` says what a format declares). Importing this package imports
every format package in it. Adding a format is adding its package, its fixtures and its tests,
and the tables that cannot import the registry (the browser's stream filter, the clients'
capture tables, an ingest example): docs/architecture.md lists them, each held by a test.
The modules beside the packages are what the formats share: ``base.py`` (errors, exact spans,
typed readers), ``sse.py`` (SSE framing), ``traces.py`` (what a reasoning reader yields),
``profile.py`` (what a profile holds), ``live.py`` (what a live filter is), ``registry.py``.
"""

import importlib
import pkgutil

from .base import FormatError
from .registry import formats, get, names, profile

for _module in pkgutil.iter_modules(__path__):
    if _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["FormatError", "formats", "get", "names", "profile"]
