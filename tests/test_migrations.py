"""The squashed migrations take over a database migrated before the squash (docs/operations.md,
"Upgrading"): one that applied every earlier migration is up to date; one stopped partway is not
taken for it, and ``migrate``'s checks refuse it (console/ops/checks.py).

The database's record (``django_migrations``) is rewritten inside the test's transaction, as a
database migrated through the earlier migrations has it, and Django's own loader and executor
read it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from console.ops.checks import squashed_migrations_partly_applied

# The migrations each app had before the squash, as databases recorded them.
EARLIER = {
    "audit": ("0001_initial", "0002_append_only_trigger", "0003_sealed_chain"),
    "console": ("0001_user_preference", "0002_people", "0003_username_key", "0004_people_app"),
    "conversations": (
        "0001_initial",
        "0002_queues_and_search",
        "0003_conversation_flags",
        "0004_review_grants",
        "0005_service_token_scope",
        "0006_queue_name_fixed",
        "0007_exchange_unknown_chunks",
        "0008_console_indexes",
        "0009_workspace_status_and_find",
        "0010_exchange_cancelled",
        "0011_sharing_and_work_notes",
        "0012_exchange_live_timings",
        "0013_signals",
        "0014_signals_default_rules",
        "0015_review_permission_declared",
        "0018_service_token_metrics_scope",
        "0019_servicetoken_scope_scim",
        "0021_alert_destinations",
        "0025_workspace_second_pass",
        "0026_rollup_sketches",
        "0027_backend_conformance",
        "0028_exchange_paths",
        "0029_review_request_notifications",
        "0030_last_activity_is_the_latest_message",
        "0031_conversation_sorts",
        "0032_model_price_not_negative",
        "0033_review_request_expired",
    ),
    "retention": (
        "0001_initial",
        "0002_requester_reference_labels",
        "0003_hold_subject_and_plural",
        "0005_receipt_backup_horizon",
    ),
}


def _squashed() -> dict[str, str]:
    """Each app's squashed migration (the one that says what it replaces); migrations added
    after it are the apps' own business."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    names = {app: name for (app, name), m in loader.disk_migrations.items() if m.replaces}
    assert set(names) == set(EARLIER), names
    return names


def _record_as_before_the_squash(*, leave_out: tuple[str, str] | None = None) -> None:
    recorder = MigrationRecorder(connection)
    squashed = _squashed()
    recorder.migration_qs.filter(app__in=list(EARLIER)).delete()
    for app, names in EARLIER.items():
        for name in names:
            if (app, name) != leave_out:
                recorder.record_applied(app, name)
    assert not recorder.migration_qs.filter(
        app__in=list(squashed), name__in=list(squashed.values())
    ).exists()


def _plan() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    targets = executor.loader.graph.leaf_nodes()
    return [(m.app_label, m.name) for m, _ in executor.migration_plan(targets)]


@pytest.mark.django_db
def test_a_database_migrated_through_every_earlier_migration_is_up_to_date() -> None:
    _record_as_before_the_squash()
    loader = MigrationLoader(connection)
    for app, name in _squashed().items():
        assert (app, name) in loader.applied_migrations, app
    assert not set(_plan()) & set(_squashed().items())  # only what came after, if anything
    assert squashed_migrations_partly_applied(databases=["default"]) == []


@pytest.mark.django_db
def test_a_database_stopped_partway_is_not_taken_for_up_to_date() -> None:
    _record_as_before_the_squash(leave_out=("conversations", "0033_review_request_expired"))
    loader = MigrationLoader(connection)
    squashed = _squashed()
    assert ("conversations", squashed["conversations"]) not in loader.applied_migrations
    assert ("retention", squashed["retention"]) in loader.applied_migrations
    [refused] = squashed_migrations_partly_applied(databases=["default"])
    assert refused.id == "ops.E001"
    assert "26 of the 27" in refused.msg and "missing: 0033_review_request_expired" in refused.msg
