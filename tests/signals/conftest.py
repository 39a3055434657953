"""The console tests' small world (roles, users, two queues with planted markers), reused."""

from tests.console.conftest import world

__all__ = ["world"]
