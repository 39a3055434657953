"""The workspace's pages: an agent of the billing queue and the long turns' conversations."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import UserFactory, roles


@pytest.fixture
def agent(db: Any) -> Any:
    roles()
    return UserFactory(username="agent", groups=["support_agent"], queues=["billing"])
