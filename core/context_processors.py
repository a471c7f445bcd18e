"""Template context: the viewer's role, computed once per request (no per-template perms queries)."""

from core.roles import is_admin, is_researcher


def roles(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"is_researcher": False, "is_admin_role": False}
    return {"is_researcher": is_researcher(user), "is_admin_role": is_admin(user)}
