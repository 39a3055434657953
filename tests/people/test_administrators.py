"""Who may change an administrator: the admin role cannot deactivate or change a superuser; the
console always keeps an active administrator, even when two admins demote each other at the same
moment; an admin role taken away by a SCIM deactivation does not come back with a reactivation
the directory's groups no longer justify."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction

from console.people.roles import roles_of
from console.people.services import PeopleError, person_deactivate, person_roles_set
from tests.factories import UserFactory, roles

from .test_scim import GROUP_URN, Scim, new_user, scim

__all__ = ["scim"]

User = get_user_model()


@pytest.mark.django_db
def test_the_admin_role_cannot_deactivate_or_demote_a_superuser(client: Any) -> None:
    roles()
    root: Any = UserFactory(username="root", is_superuser=True, groups=["admin"])
    admin = UserFactory(username="role-admin", groups=["admin"])
    client.force_login(admin)
    page = client.post(f"/people/{root.pk}/deactivate/", {"reason": "taking over"}, follow=True)
    assert "only a superuser can change them" in page.content.decode()
    client.post(f"/people/{root.pk}/roles/", {"roles": ["reviewer"]})
    root.refresh_from_db()
    assert root.is_active and roles_of(root) == {"admin"}
    # A superuser may.
    other: Any = UserFactory(username="root2", is_superuser=True)
    assert person_deactivate(user=root, actor=other) == 0
    root.refresh_from_db()
    assert not root.is_active


@pytest.mark.django_db
def test_the_last_administrator_is_kept() -> None:
    roles()
    root: Any = UserFactory(username="root", is_superuser=True)
    ann: Any = UserFactory(username="ann", groups=["admin"])
    bob: Any = UserFactory(username="bob", groups=["admin"])
    assert person_roles_set(user=bob, roles=[], actor=ann)
    person_deactivate(user=root, actor=root, via="cli")  # no superuser left
    with pytest.raises(PeopleError, match="last active administrator"):
        person_deactivate(user=ann, actor=root, via="cli")
    ann.refresh_from_db()
    assert ann.is_active and roles_of(ann) == {"admin"}


def _waiting_on_an_advisory_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype = 'advisory' "
            "AND NOT granted",
            [pid],
        )
        return bool(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_two_admins_demoting_each_other_at_once_leave_one() -> None:
    """Ann demotes Bob and, before her change commits, Bob demotes Ann. Read-then-write would let
    both through (each sees the other still admin) and leave none. The second change must wait
    for the first (the test sees it waiting on the lock), then be refused."""
    roles()
    ann: Any = UserFactory(username="ann", groups=["admin"])
    bob: Any = UserFactory(username="bob", groups=["admin"])
    written, commit, second_done = threading.Event(), threading.Event(), threading.Event()
    outcome: dict[str, str] = {}
    second_pid: list[int] = []

    def first() -> None:
        try:
            with transaction.atomic():
                person_roles_set(user=User.objects.get(pk=bob.pk), roles=[], actor=ann)
                written.set()
                commit.wait(timeout=60)
            outcome["ann demotes bob"] = "done"
        except PeopleError as exc:
            outcome["ann demotes bob"] = exc.detail
        finally:
            written.set()
            connections.close_all()

    def second() -> None:
        try:
            with transaction.atomic():
                second_pid.append(
                    connection.connection.info.backend_pid if connection.connection else 0
                )
                person_roles_set(user=User.objects.get(pk=ann.pk), roles=[], actor=bob)
            outcome["bob demotes ann"] = "done"
        except PeopleError as exc:
            outcome["bob demotes ann"] = exc.detail
        finally:
            second_done.set()
            connections.close_all()

    one = threading.Thread(target=first)
    one.start()
    assert written.wait(timeout=60)
    two = threading.Thread(target=second)
    two.start()
    deadline = time.monotonic() + 60
    while not second_done.is_set() and time.monotonic() < deadline:
        if second_pid and second_pid[0] and _waiting_on_an_advisory_lock(second_pid[0]):
            break
        time.sleep(0.01)
    commit.set()
    one.join(timeout=60)
    two.join(timeout=60)
    assert outcome["ann demotes bob"] == "done"
    assert "last active administrator" in outcome["bob demotes ann"]
    assert roles_of(User.objects.get(pk=ann.pk)) == {"admin"}


def test_a_scim_deactivation_takes_the_roles_a_reactivation_does_not_restore(scim: Scim) -> None:
    pat = new_user(scim, "pat@example.com")
    user = User.objects.get(person__scim_id=pat["id"])
    group = scim.post(
        "Groups",
        {
            "schemas": [GROUP_URN],
            "displayName": "console-admins",
            "members": [{"value": pat["id"]}],
        },
    )
    assert group.status_code == 201
    assert roles_of(user) == {"admin"}

    off = scim.patch(f"Users/{pat['id']}", {"op": "replace", "path": "active", "value": False})
    assert off.status_code == 200
    assert roles_of(user) == set()
    # Removed from the admins' group while deactivated (the group change skips inactive members).
    gid = group.json()["id"]
    gone = scim.patch(f"Groups/{gid}", {"op": "remove", "path": f'members[value eq "{pat["id"]}"]'})
    assert gone.status_code == 200
    on = scim.patch(f"Users/{pat['id']}", {"op": "replace", "path": "active", "value": True})
    assert on.status_code == 200
    assert roles_of(user) == set()
    assert not user.groups.filter(name="admin").exists()

    # Reactivated while still a member, the group's role comes back (roles follow the groups).
    back = scim.patch(
        f"Groups/{gid}", {"op": "add", "path": "members", "value": [{"value": pat["id"]}]}
    )
    assert back.status_code == 200
    scim.patch(f"Users/{pat['id']}", {"op": "replace", "path": "active", "value": False})
    scim.patch(f"Users/{pat['id']}", {"op": "replace", "path": "active", "value": True})
    assert roles_of(user) == {"admin"}
