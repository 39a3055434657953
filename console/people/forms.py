"""Forms of the People pages."""

from __future__ import annotations

from typing import Any

from django import forms

from .roles import ROLE_NAMES, ROLE_WORDS

ROLE_CHOICES = [(name, ROLE_WORDS.get(name, name)) for name in ROLE_NAMES]


class InviteForm(forms.Form):
    username = forms.CharField(
        label="User name", max_length=150, help_text="letters, digits and @ . + - _"
    )
    email = forms.EmailField(label="E-mail", required=False, max_length=254)
    first_name = forms.CharField(label="First name", required=False, max_length=150)
    last_name = forms.CharField(label="Last name", required=False, max_length=150)
    roles = forms.MultipleChoiceField(
        label="Roles", choices=ROLE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    queues = forms.MultipleChoiceField(
        label="Queues",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="whose conversations a support agent or reviewer sees (admins see every queue)",
    )

    def __init__(self, *args: Any, queues: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["queues"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(q, q) for q in queues]
        if not queues:
            field.help_text = (
                "no queue exists yet: a queue exists once a conversation names it (or Admin → "
                "Queues); grant one later on the person's page"
            )


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(
        label="Roles", choices=ROLE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )


class QueueGrantForm(forms.Form):
    queue = forms.CharField(label="Queue", max_length=100)
    action = forms.ChoiceField(choices=[("grant", "grant"), ("revoke", "revoke")])

    def __init__(self, *args: Any, queues: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queues = queues

    def clean_queue(self) -> str:
        queue = self.cleaned_data["queue"].strip()
        if queue not in self.queues:
            raise forms.ValidationError("no such queue")
        return queue


class DeactivateForm(forms.Form):
    reason = forms.CharField(label="Reason", required=False, max_length=200)
