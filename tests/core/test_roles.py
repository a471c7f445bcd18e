"""The three roles as groups: what each may do with benchmark data, by permission and by page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from core.roles import (
    ADMIN,
    ANNOTATOR,
    PROJECT_APPS,
    RESEARCHER,
    ensure_roles,
    is_admin,
    is_researcher,
)


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 costs ~0.3 s per user on this machine; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


BENCHMARK_MODELS = ("topic", "dataset", "procedure", "generator", "generation")


def _codenames(group_name: str, app_label: str = "benchmarks") -> set[str]:
    group = Group.objects.get(name=group_name)
    return set(
        group.permissions.filter(content_type__app_label=app_label).values_list(
            "codename", flat=True
        )
    )


@pytest.mark.django_db
def test_groups_exist_after_migrate():
    assert set(
        Group.objects.filter(name__in=[ANNOTATOR, RESEARCHER, ADMIN]).values_list("name", flat=True)
    ) == {
        ANNOTATOR,
        RESEARCHER,
        ADMIN,
    }


@pytest.mark.django_db
def test_annotator_has_no_project_permissions():
    assert not Group.objects.get(name=ANNOTATOR).permissions.exists()


@pytest.mark.django_db
def test_researcher_views_but_does_not_change_benchmark_data():
    perms = _codenames(RESEARCHER)
    for model in BENCHMARK_MODELS:
        assert f"view_{model}" in perms
        for action in ("add", "change", "delete"):
            assert f"{action}_{model}" not in perms


@pytest.mark.django_db
def test_admin_has_every_project_permission():
    perms = _codenames(ADMIN)
    for model in BENCHMARK_MODELS:
        for action in ("view", "add", "change", "delete"):
            assert f"{action}_{model}" in perms
    project = Permission.objects.filter(content_type__app_label__in=PROJECT_APPS)
    assert set(Group.objects.get(name=ADMIN).permissions.all()) == set(project)


@pytest.mark.django_db
def test_roles_stay_out_of_auth_permissions():
    for role in (ANNOTATOR, RESEARCHER, ADMIN):
        assert (
            not Group.objects.get(name=role)
            .permissions.filter(content_type__app_label="auth")
            .exists()
        )


@pytest.mark.django_db
def test_ensure_roles_is_idempotent_and_repairs_groups():
    before = {r: _codenames(r) for r in (ANNOTATOR, RESEARCHER, ADMIN)}
    Group.objects.get(name=RESEARCHER).permissions.add(
        Permission.objects.get(codename="delete_procedure")
    )
    Group.objects.get(name=ADMIN).delete()
    ensure_roles()
    ensure_roles()
    assert {r: _codenames(r) for r in (ANNOTATOR, RESEARCHER, ADMIN)} == before


@pytest.mark.django_db
def test_role_helpers(make_user, django_user_model):
    annotator = make_user("a", role=ANNOTATOR)
    researcher = make_user("r", role=RESEARCHER)
    admin = make_user("d", role=ADMIN)
    superuser = django_user_model.objects.create_superuser("root", password="pw-Test-12345")
    nobody = make_user("n")
    assert [is_researcher(u) for u in (annotator, researcher, admin, superuser, nobody)] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert [is_admin(u) for u in (annotator, researcher, admin, superuser, nobody)] == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert researcher.has_perm("benchmarks.view_procedure")
    assert not researcher.has_perm("benchmarks.change_procedure")
    assert admin.has_perm("benchmarks.change_procedure")
    assert not annotator.has_perm("benchmarks.view_procedure")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "role,data_page,api",
    [(None, 302, 403), (ANNOTATOR, 403, 403), (RESEARCHER, 200, 200), (ADMIN, 200, 200)],
)
def test_each_role_on_pages_and_api(client, make_user, role, data_page, api):
    if role:
        client.force_login(make_user(f"u-{role}", role=role))
    assert client.get("/data/").status_code == data_page
    assert client.get("/api/procedures/").status_code == api


@pytest.mark.django_db
def test_post_migrate_builds_the_roles_once_on_the_last_project_app(django_assert_num_queries):
    """Django sends post_migrate once per app: the roles are built on the last project app's
    signal (every project permission exists by then), not a dozen times per migrate/flush."""
    from django.apps import apps

    from core.roles import ensure_roles

    Group.objects.filter(name__in=["annotator", "researcher", "admin"]).delete()
    with django_assert_num_queries(0):
        ensure_roles(sender=apps.get_app_config("core"))
        ensure_roles(sender=apps.get_app_config("benchmarks"))
    with django_assert_num_queries(0):
        ensure_roles(sender=apps.get_app_config("judging"))
    ensure_roles(sender=apps.get_app_config("validation"))
    admin = Group.objects.get(name="admin")
    assert admin.permissions.filter(content_type__app_label="judging").exists()
    assert admin.permissions.filter(content_type__app_label="validation").exists()
    assert admin.permissions.filter(content_type__app_label="annotation").exists()


@pytest.mark.django_db
def test_researcher_uploads_label_sets_admins_delete_them():
    perms = _codenames(RESEARCHER, "validation")
    assert {"view_labelset", "add_labelset", "add_labelsetrow"} <= perms
    assert "delete_labelset" not in perms and "change_labelset" not in perms
    assert "delete_labelset" in _codenames(ADMIN, "validation")


@pytest.mark.django_db
def test_researcher_manages_studies_and_adjudicates():
    """What a researcher may change as well as view: studies, their items, adjudications."""
    perms = _codenames(RESEARCHER, "annotation")
    for model in ("study", "studyitem", "adjudication"):
        for action in ("view", "add", "change", "delete"):
            assert f"{action}_{model}" in perms
    assert "view_annotation" in perms and "change_annotation" not in perms
