"""Provider formats: pure parsing, no Django model (DESIGN section 3).

Importing this package imports every module in it, and each format module registers its format
(``registry.py`` says what a format declares): adding a format is adding its module and its
tests. ``base.py``, ``registry.py``, ``sse.py`` and ``traces.py`` are what the formats share.
"""

import importlib
import pkgutil

from .base import FormatError
from .registry import get, names

_SHARED = frozenset({"base", "registry", "sse", "traces"})

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _SHARED:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["FormatError", "get", "names"]
