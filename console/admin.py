"""The Django admin's user pages, with the user names' one check (``console/people/names.py``):
a name that is another account's by its key (case, Unicode compatibility form) is refused on the
add and change forms, as it is everywhere else an account is made or renamed."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from console.people.names import UsernameRefused, username_claim

User = get_user_model()


def _claimed(form: Any) -> str:
    try:
        return username_claim(form.cleaned_data.get("username"), exclude=form.instance.pk)
    except UsernameRefused as exc:
        raise forms.ValidationError(exc.detail) from None


class PeopleUserCreationForm(AdminUserCreationForm):
    def clean_username(self) -> str:
        return _claimed(self)


class PeopleUserChangeForm(UserChangeForm):
    def clean_username(self) -> str:
        return _claimed(self)


class PeopleUserAdmin(UserAdmin):
    add_form = PeopleUserCreationForm
    form = PeopleUserChangeForm


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, PeopleUserAdmin)
