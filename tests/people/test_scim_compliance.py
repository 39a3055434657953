"""scim2-tester, the SCIM compliance checker, against /scim/v2/ on a live console (gunicorn on
loopback, as the client tests run it): discovery, then for Users and Groups creation, reads
(with attribute projection), replacement, deletion and PATCH add/replace/remove of every
attribute the published schemas declare. No check may end in ERROR or CRITICAL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

from audit.models import AuditEvent
from conversations.services import service_token_create
from tests.client.conftest import ConsoleServer, free_port
from tests.factories import roles

pytestmark = pytest.mark.slow

FAILED = {Status.ERROR, Status.CRITICAL}


def test_scim2_tester_passes(transactional_db: Any, tmp_path: Path) -> None:
    roles()
    _, token = service_token_create(name="idp", scope="scim")
    server = ConsoleServer(port=free_port(), log=tmp_path / "gunicorn.log").start()
    try:
        with httpx2.Client(
            base_url=f"{server.url}/scim/v2",
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        ) as http:
            results = check_server(SyncSCIMClient(http))
    finally:
        server.stop()
    failures = [r for r in results if r.status in FAILED]
    assert not failures, "\n".join(
        f"{r.resource_type or ''} {r.title}: {r.reason}" for r in failures
    )
    ran = Counter((r.resource_type, r.title) for r in results if r.status == Status.SUCCESS)
    for resource in ("User", "Group"):
        for check in (
            "object_creation",
            "object_query",
            "object_query_without_id",
            "object_query_with_attributes",
            "object_replacement",
            "object_deletion",
            "check_add_attribute",
            "check_remove_attribute",
            "check_replace_attribute",
        ):
            assert ran[(resource, check)], f"{check} did not succeed for {resource}"
    # Every write the checker made left its row, through the services.
    assert AuditEvent.objects.filter(code="person.provisioned").exists()
    assert AuditEvent.objects.filter(code="directory_group.changed").exists()
