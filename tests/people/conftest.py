"""Fixtures of the sign-in and people tests: a real OpenID Provider (``op.py``) for a module,
configured into the console's settings for each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.factories import roles

from .op import OpenIdProvider, node_unavailable, running_provider


@pytest.fixture(scope="module")
def provider(tmp_path_factory: Any) -> Iterator[OpenIdProvider]:
    reason = node_unavailable()
    if reason:
        pytest.skip(reason)
    with running_provider(
        tmp_path_factory.mktemp("op"), redirect_uris=["http://testserver/oidc/callback/"]
    ) as op:
        yield op


@pytest.fixture
def op(provider: OpenIdProvider, settings: Any, db: Any) -> OpenIdProvider:
    """The provider, configured as the console's identity provider, with no account yet."""
    for name, value in provider.settings().items():
        setattr(settings, name, value)
    provider.accounts.clear()
    provider.accounts_file.write_text("{}")
    roles()
    return provider
