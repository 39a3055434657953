"""Argument types the project's commands share: what argparse refuses is a ``CommandError``
under ``call_command`` and a usage line on the command line, never a traceback."""

from __future__ import annotations

import argparse

from ..bounds import OutOfBounds, check_text


def text(value: str) -> str:
    """A string PostgreSQL text can hold (no NUL): a name, an id, a queue."""
    try:
        return check_text(value)
    except OutOfBounds as exc:
        raise argparse.ArgumentTypeError(exc.detail) from None
