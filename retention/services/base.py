"""What the retention services share: the error they refuse input with, and the user an actor
is (for a foreign key)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser


class DeletionInvalid(ValueError):
    """A deletion request or legal hold that cannot be accepted as asked; ``field`` names the
    input at fault."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ReferenceReused(DeletionInvalid):
    """The reference names an existing request that asked for something else."""


def user_of(actor: Any) -> Any:
    """The user to keep in a foreign key: None for the system or a service token."""
    return actor if isinstance(actor, AbstractBaseUser) else None
