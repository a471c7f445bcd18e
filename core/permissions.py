"""DRF permission classes built on the roles of :mod:`core.roles` (the page-view side of the same rule is :mod:`core.access`)."""

from rest_framework.permissions import BasePermission

from core.roles import is_admin, is_researcher


class IsResearcherOrAdmin(BasePermission):
    message = "This endpoint is for researchers and admins."

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)


class IsAdminRole(BasePermission):
    message = "This endpoint is for admins."

    def has_permission(self, request, view) -> bool:
        return is_admin(request.user)
