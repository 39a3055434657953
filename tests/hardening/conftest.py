"""The console's small world (two queues, users of every kind) for the hardening tests."""

from tests.console.conftest import world  # noqa: F401  (a fixture)
