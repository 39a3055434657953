"""One form for several fields of one tool (issue 25): the tool, the block type and the side
once, then one line per field, ``<JSON path> <storage class> [note]``; saved together by
``services.field_policies_save`` (one re-projection job, one audit row). A line that does not
parse, or a policy that would not validate, is reported with its line number and nothing is
saved."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from ..models import FieldPolicy


class SeveralFieldsForm(forms.Form):
    tool_name = forms.CharField(max_length=200, initial="*", help_text="a tool name, or *")
    block_type = forms.CharField(max_length=100, initial="*", help_text="a block type, or *")
    side = forms.ChoiceField(choices=FieldPolicy.Side.choices)
    lines = forms.CharField(
        label="Fields",
        widget=forms.Textarea(attrs={"rows": 8, "cols": 70}),
        help_text="one a line: JSON path, storage class, then an optional note, e.g. "
        "“$.order_id identifier order ids link to the order system”. Classes: "
        + ", ".join(FieldPolicy.StorageClass.values),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        policies: list[FieldPolicy] = []
        seen: set[str] = set()
        for number, line in enumerate(str(data["lines"]).splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.split(maxsplit=2)
            if len(parts) < 2:
                raise ValidationError(f"line {number}: a path and a storage class are needed")
            path, storage_class = parts[0], parts[1]
            if storage_class not in FieldPolicy.StorageClass.values:
                raise ValidationError(f"line {number}: unknown storage class {storage_class!r}")
            if path in seen:
                raise ValidationError(f"line {number}: {path} is named twice")
            seen.add(path)
            policy = FieldPolicy.objects.filter(
                tool_name=data["tool_name"],
                block_type=data["block_type"],
                side=data["side"],
                path=path,
            ).first() or FieldPolicy(
                tool_name=data["tool_name"],
                block_type=data["block_type"],
                side=data["side"],
                path=path,
            )
            policy.storage_class = storage_class
            policy.note = parts[2] if len(parts) > 2 else policy.note
            try:
                policy.full_clean()
            except ValidationError as exc:
                raise ValidationError(f"line {number}: {'; '.join(exc.messages)}") from None
            policies.append(policy)
        if not policies:
            raise ValidationError("name at least one field")
        data["policies"] = policies
        return data
