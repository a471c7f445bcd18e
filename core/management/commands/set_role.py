"""``manage.py set_role USER ROLE``: give a user one of the three roles (researchers and admins get the console)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.roles import ROLES, role_assign


class Command(BaseCommand):
    help = "Give a user one of the roles annotator, researcher, admin (creating the user with --create)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("role", choices=ROLES)
        parser.add_argument(
            "--create", action="store_true", help="Create the user if it does not exist."
        )
        parser.add_argument(
            "--password", help="Password for a created user (default: unusable, set it later)."
        )

    def handle(self, *args, username, role, create, password, **options):
        users = get_user_model()
        try:
            user = users.objects.get(username=username)
        except users.DoesNotExist:
            if not create:
                raise CommandError(f"no user {username!r} (add --create to create it)") from None
            user = users.objects.create_user(username=username, password=password)
        role_assign(user=user, role=role)
        self.stdout.write(f"{username}: {role}{' (console access)' if user.is_staff else ''}")
