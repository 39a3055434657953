"""Review requests: the console tests' small world (roles, users of every kind, two queues)."""

from tests.console.conftest import World, client_for, world  # noqa: F401
