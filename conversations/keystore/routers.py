"""Data keys live in the ``keys`` database; everything else in ``default``."""

from __future__ import annotations

from typing import Any

KEYS_DB = "keys"
_KEY_MODELS = {("conversations", "datakey")}


class KeysRouter:
    def _is_key(self, model: Any) -> bool:
        return (model._meta.app_label, model._meta.model_name) in _KEY_MODELS

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return KEYS_DB if self._is_key(model) else None

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return KEYS_DB if self._is_key(model) else None

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        if self._is_key(obj1) or self._is_key(obj2):
            return False  # no foreign key crosses the two databases
        return None

    def allow_migrate(
        self, db: str, app_label: str, model_name: str | None = None, **hints: Any
    ) -> bool:
        if (app_label, model_name) in _KEY_MODELS:
            return db == KEYS_DB
        return db != KEYS_DB
