"""The storage classes (DESIGN section 4): how one field of a tool's input or result is kept and
who sees it. The one definition: ``FieldPolicy.StorageClass`` (the model's choices) is built
from ``STORAGE_CLASSES`` below, and the projection (``project.py``) keeps and shows fields by it.

===============  ==========================  =================================================
class            kept in the projection      shown
===============  ==========================  =================================================
``identifier``   the value                   yes (linked to the source system if configured)
``status``       the value                   yes
``display``      the value, redacted         yes
``restricted``   the value, redacted         only with ``view_restricted_fields``
``drop``         nothing: ``[not kept]``     no (read it back from the source system)
===============  ==========================  =================================================

To add a storage class: a member of ``StorageClass`` with its label in ``LABELS`` (a migration
follows: the model's choices change), how it is kept in ``project._keep``, who sees it in
``project.view_fields``, and a case in ``tests/conversations/test_projection.py``.

Pure Python, no Django.
"""

from __future__ import annotations

import enum


class StorageClass(enum.StrEnum):
    IDENTIFIER = "identifier"
    STATUS = "status"
    DISPLAY = "display"
    RESTRICTED = "restricted"
    DROP = "drop"


# The admin's label of each class (the model's choices).
LABELS: dict[StorageClass, str] = {
    StorageClass.IDENTIFIER: "identifier: kept and shown, linked to the source system",
    StorageClass.STATUS: "status: kept and shown",
    StorageClass.DISPLAY: "display: kept redacted, shown",
    StorageClass.RESTRICTED: "restricted: kept redacted, shown with view_restricted_fields",
    StorageClass.DROP: "drop: not kept, [not kept] shown",
}
assert set(LABELS) == set(StorageClass), "every storage class has its label"

# (member name, (value, label)) of each class, in order: the model's TextChoices are built from it.
STORAGE_CLASSES: list[tuple[str, tuple[str, str]]] = [
    (cls.name, (cls.value, LABELS[cls])) for cls in StorageClass
]

IDENTIFIER = StorageClass.IDENTIFIER
STATUS = StorageClass.STATUS
DISPLAY = StorageClass.DISPLAY
RESTRICTED = StorageClass.RESTRICTED
DROP = StorageClass.DROP
CLASSES = tuple(StorageClass)
# Kept redacted: the values of these classes go through the redaction pipeline.
REDACTED = frozenset({DISPLAY, RESTRICTED})


def default_class(key: str) -> StorageClass:
    """The class of a field with no policy, by its key: fails closed (DESIGN section 4)."""
    if key == "status":
        return STATUS
    if key == "id" or key.endswith("_id") or key.endswith("Id"):
        return IDENTIFIER
    return DROP
