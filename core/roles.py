"""The three roles of how2review, as Django groups with permissions.

- ``annotator``: labels items in the annotator flow; no access to data, reports or the admin.
- ``researcher``: reads everything (datasets, generations, judgments, studies, reports),
  creates and manages studies, adjudicates and exports.
- ``admin``: everything a researcher can do plus launching runs and changing any data.

``ensure_roles()`` is idempotent; it runs after every ``migrate``.
"""

from __future__ import annotations

ANNOTATOR = "annotator"
RESEARCHER = "researcher"
ADMIN = "admin"
ROLES = (ANNOTATOR, RESEARCHER, ADMIN)

PROJECT_APPS = ("benchmarks", "mining", "annotation", "judging", "validation")

# Models a researcher may change as well as view (app_label.model_name).
RESEARCHER_WRITES = {
    "annotation.study",
    "annotation.studyitem",
    "annotation.adjudication",
}
# Models a researcher may add (upload) as well as view; changing and deleting stay admins'.
RESEARCHER_ADDS = {
    "validation.labelset",
    "validation.labelsetrow",
}


def _wanted_codenames(role: str, perms) -> set[int]:
    wanted: set[int] = set()
    for perm in perms:
        label = f"{perm.content_type.app_label}.{perm.content_type.model}"
        action = perm.codename.split("_", 1)[0]
        if role == ADMIN or (
            role == RESEARCHER
            and (
                action == "view"
                or label in RESEARCHER_WRITES
                or (action == "add" and label in RESEARCHER_ADDS)
            )
        ):
            wanted.add(perm.pk)
    return wanted


def _last_project_app() -> str:
    """The project app whose ``post_migrate`` comes last (signals go in INSTALLED_APPS order)."""
    from django.apps import apps

    return [c.label for c in apps.get_app_configs() if c.label in PROJECT_APPS][-1]


def ensure_roles(sender=None, **_kwargs) -> None:
    """The role groups with their permissions. As a ``post_migrate`` receiver it does its work
    once per ``migrate``/``flush``: on the signal of the last project app, when every project
    app's permissions exist (Django sends the signal once per app)."""
    from django.contrib.auth.models import Group, Permission

    if sender is not None and getattr(sender, "label", None) != _last_project_app():
        return

    perms = list(
        Permission.objects.filter(content_type__app_label__in=PROJECT_APPS).select_related(
            "content_type"
        )
    )
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.set(_wanted_codenames(role, perms))


def user_roles(user) -> set[str]:
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_how2review_roles", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        if user.is_superuser:
            cached |= {ADMIN}
        user._how2review_roles = cached
    return cached


def is_researcher(user) -> bool:
    """Researchers and admins may read research data."""
    return bool(user_roles(user) & {RESEARCHER, ADMIN})


def is_admin(user) -> bool:
    return ADMIN in user_roles(user)


def role_assign(*, user, role: str, exclusive: bool = True) -> None:
    """Give ``user`` a role. Researchers and admins get ``is_staff`` so the console (Django
    admin) lets them in; what they may do there is still decided by the group's permissions.
    With ``exclusive`` the user's other role groups are removed (an annotator promoted to
    researcher stops being an annotator)."""
    from django.contrib.auth.models import Group

    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    ensure_roles()
    groups = {g.name: g for g in Group.objects.filter(name__in=ROLES)}
    if exclusive:
        user.groups.remove(*[g for name, g in groups.items() if name != role])
    user.groups.add(groups[role])
    staff = role in (RESEARCHER, ADMIN) or user.is_superuser
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
    if hasattr(user, "_how2review_roles"):
        del user._how2review_roles
