from tests.console.conftest import World, client_for, world  # noqa: F401  (roles and users)
