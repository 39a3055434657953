"""Subject access and the exposure map (docs/subject-access.md): for a customer, or one of their
conversations, what the console holds, where, who read it, who could, what left, and when each
part will be erased.

- ``report.py``: ``subject_access_read``, the one audited selector (compliance staff and admins, or
  the command as the system), audited last with the stated purpose; ``AccessRefused`` for bad
  input.
- ``inventory.py``: the stores, counted per storage class, and the reasoning by kind and bytes
  (through ``conversations.reviews.held``, the one room that reads deliberation: never its text
  here).
- ``exposure.py``: reads from the audit log, who could read now, what left (exports, links).
- ``schedule.py``: retention classes, holds, open requests, receipts, tombstones, backup horizon.
- ``render.py``: JSON and Markdown; ``package.py``: the package a data subject receives.

Used by ``manage.py subject_access``, the compliance page (``console/access_views.py``) and the
exposure map panel on the conversation page. The query count does not grow with the number of
conversations (``tests/access/test_report.py`` pins it).
"""

from .package import REASONING_LABEL, write_package
from .render import RENDERERS, render_json, render_md
from .report import FORMATS, AccessRefused, Report, subject_access_read

__all__ = [
    "FORMATS",
    "REASONING_LABEL",
    "RENDERERS",
    "AccessRefused",
    "Report",
    "render_json",
    "render_md",
    "subject_access_read",
    "write_package",
]
