"""Provider formats: pure parsing and protocol data, no Django model (DESIGN sections 3 and 14).

One package per format, each with its parser, its live filter, its profile and its kit,
registered by the package's ``__init__.py`` (``registry.py`` says what a format declares).
Importing this package imports every format package in it. Adding a format is adding its
package and its fixtures, and regenerating the tables other languages read (``manage.py
write_format_tables``: the browser filter's format table, the clients' capture tables); the
generic tests run over the registry from the kits (docs/formats.md, "Adding a format").
The modules beside the packages are what the formats share: ``base.py`` (errors, exact spans,
typed readers), ``sse.py`` (SSE framing), ``traces.py`` (what a reasoning reader yields),
``profile.py`` (what a profile holds, and its hooks), ``kit.py`` (what a kit holds),
``live.py`` (what a live filter is), ``registry.py``.
"""

import importlib
import pkgutil

from .base import FormatError
from .registry import formats, get, names, profile, transport_settings

for _module in pkgutil.iter_modules(__path__):
    if _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["FormatError", "formats", "get", "names", "profile", "transport_settings"]
