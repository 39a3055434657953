"""The second hardening round (issue 29): the console's small world and the live tests' own
Redis key prefix, for the tests of this package."""

from tests.console.conftest import world  # noqa: F401  (a fixture)
from tests.live.conftest import live_prefix  # noqa: F401  (an autouse fixture)
