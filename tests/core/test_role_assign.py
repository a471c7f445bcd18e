import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.roles import role_assign, user_roles


@pytest.mark.django_db
def test_role_assign_researcher_gets_console_access_and_loses_other_roles(django_user_model):
    user = django_user_model.objects.create_user(username="r1", password="x")
    role_assign(user=user, role="annotator")
    user.refresh_from_db()
    assert not user.is_staff
    role_assign(user=user, role="researcher")
    user.refresh_from_db()
    assert user.is_staff
    assert set(user.groups.values_list("name", flat=True)) == {"researcher"}
    assert user_roles(user) == {"researcher"}


@pytest.mark.django_db
def test_demoting_to_annotator_removes_console_access(django_user_model, client):
    user = django_user_model.objects.create_user(username="r2", password="pw")
    role_assign(user=user, role="admin")
    role_assign(user=user, role="annotator")
    user.refresh_from_db()
    assert not user.is_staff
    client.force_login(user)
    assert client.get("/admin/").status_code == 302


@pytest.mark.django_db
def test_researcher_can_open_console_but_not_change_data(django_user_model, client):
    user = django_user_model.objects.create_user(username="r3", password="pw")
    role_assign(user=user, role="researcher")
    client.force_login(user)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/benchmarks/procedure/").status_code == 200
    assert client.get("/admin/benchmarks/procedure/add/").status_code == 403


@pytest.mark.django_db
def test_set_role_command(django_user_model):
    with pytest.raises(CommandError, match="no user 'ghost'"):
        call_command("set_role", "ghost", "researcher")
    call_command("set_role", "ghost", "researcher", "--create", "--password", "s3cret-pass")
    user = django_user_model.objects.get(username="ghost")
    assert user.check_password("s3cret-pass") and user.is_staff


def test_unknown_role_is_refused():
    with pytest.raises(ValueError, match="unknown role 'boss'"):
        role_assign(user=object(), role="boss")


@pytest.mark.django_db
def test_schema_and_docs_are_for_researchers_only(make_user, client):
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_login(make_user("ann", role="annotator"))
    assert client.get("/api/schema/").status_code == 403
    assert client.get("/api/docs/").status_code == 403
    client.force_login(make_user("res", role="researcher"))
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


@pytest.mark.django_db
def test_the_console_index_says_what_a_new_users_recent_actions_are(django_user_model, client):
    """Django's index said "None available" (the crawl's check for a leaked None flagged it)."""
    user = django_user_model.objects.create_user(username="r4", password="pw")
    role_assign(user=user, role="admin")
    client.force_login(user)
    page = client.get("/admin/").content.decode()
    assert "None available" not in page
    assert "You have not added, changed or deleted anything here yet." in page
    assert 'id="recent-actions-module"' in page and "Benchmarks" in page  # the rest is Django's
