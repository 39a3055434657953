"""Resilience: the console under faults and at its limits (Redis stopped or restarted, a console
that is not ready, live chunks at their bounds, share links whose maker left, bad command
arguments). The console's small world and the live tests' own Redis key prefix."""

from tests.console.conftest import world  # noqa: F401  (a fixture)
from tests.live.conftest import live_prefix  # noqa: F401  (an autouse fixture)
