"""The registry names every model that refers to a conversation or a customer."""

from __future__ import annotations

from django.apps import apps
from django.db.models import Model

from conversations.models import Block, Conversation, Exchange, Message
from retention import registry

_TARGETS = {Conversation, Message, Exchange, Block}


def _refers_to_personal_data(model: type[Model]) -> list[str]:
    reasons = []
    for field in model._meta.get_fields():
        if not getattr(field, "concrete", False):
            continue
        related = getattr(field, "related_model", None)
        if field.is_relation and related in _TARGETS:
            reasons.append(f"{field.name} -> {related._meta.label}")
        name = field.name.lower()
        if "customer" in name or name.endswith(("conversation_id", "conversation_ids")):
            reasons.append(field.name)
        if "conversation_external" in name or name == "subject":
            reasons.append(field.name)
    return reasons


def test_every_model_referring_to_a_conversation_or_customer_is_registered() -> None:
    known = {entry.label for entry in registry.ALL} | set(registry.KEPT)
    missing = {
        model._meta.label_lower: reasons
        for model in apps.get_models(include_auto_created=True)
        if (reasons := _refers_to_personal_data(model)) and model._meta.label_lower not in known
    }
    assert missing == {}, f"add these to retention/registry.py (ERASED or KEPT): {missing}"


def test_the_walk_would_catch_an_unregistered_model() -> None:
    class Stray(Model):
        from django.db import models as m

        conversation = m.ForeignKey(Conversation, on_delete=m.CASCADE)

        class Meta:
            app_label = "retention"
            managed = False

        def __str__(self) -> str:
            return "stray"

    try:
        assert _refers_to_personal_data(Stray) == ["conversation -> conversations.Conversation"]
        assert Stray._meta.label_lower not in {e.label for e in registry.ALL}
    finally:
        apps.all_models["retention"].pop("stray", None)
        apps.clear_cache()


def test_erased_models_delete_children_first() -> None:
    labels = [entry.label for entry in registry.ERASED]
    assert labels[-1] == "conversations.conversation"
    assert labels.index("conversations.block") < labels.index("conversations.message")
    assert labels.index("conversations.message") < labels.index("conversations.exchange")
    assert registry.KEYS.store == "keys"
