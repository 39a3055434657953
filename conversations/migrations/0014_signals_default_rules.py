"""The two rules the product ships with, enabled: truncation by reasoning, agents looping on tools."""

from __future__ import annotations

from typing import Any

from django.db import migrations

RULES = [
    {
        "name": "Answers truncated (reasoning ate the allowance)",
        "metric": "truncation",
        "window_minutes": 60,
        "threshold": 0.05,  # more than 5 % of exchanges cut off at max_tokens
        "min_exchanges": 20,
    },
    {
        "name": "Agents looping on tools",
        "metric": "repeated_tool_calls",
        "window_minutes": 60,
        "threshold": 0.05,  # more than 5 % of turns repeat a call with the same arguments
        "min_exchanges": 20,
    },
]


def add(apps: Any, schema_editor: Any) -> None:
    AlertRule = apps.get_model("conversations", "AlertRule")
    for rule in RULES:
        AlertRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove(apps: Any, schema_editor: Any) -> None:
    AlertRule = apps.get_model("conversations", "AlertRule")
    AlertRule.objects.filter(name__in=[r["name"] for r in RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("conversations", "0013_signals")]
    operations = [migrations.RunPython(add, remove)]
