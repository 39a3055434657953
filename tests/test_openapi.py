"""The OpenAPI schema is generated, and its UI is served from local static files (no CDN)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml


@pytest.mark.django_db
def test_schema_lists_the_three_operations(client: Any) -> None:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    paths = schema["paths"]
    assert "post" in paths["/api/v1/exchanges"]
    assert "get" in paths["/api/v1/conversations/{conversation}/messages"]
    assert "post" in paths["/api/v1/conversations/{conversation}/events"]


@pytest.mark.django_db
def test_docs_page_uses_local_assets_only(client: Any) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()
    assert "https://" not in html
