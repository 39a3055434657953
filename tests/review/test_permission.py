"""The review grant's permission is one Django rebuilds: a transactional test's flush (or a
database restored without its permissions) runs ``create_permissions`` again, which only knows
what the models declare. Left to its migration alone, it was gone for every later test on the
worker (``Permission.DoesNotExist`` in ``assign_perm``)."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Permission

pytestmark = pytest.mark.django_db


def test_the_review_permission_is_rebuilt_with_the_others() -> None:
    Permission.objects.filter(codename="review_reasoning").delete()
    create_permissions(apps.get_app_config("conversations"), verbosity=0)
    assert Permission.objects.filter(
        content_type__app_label="conversations", codename="review_reasoning"
    ).exists()
