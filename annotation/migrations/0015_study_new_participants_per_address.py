"""A study's limit of new participants per network address (was the deployment-wide
ANNOTATION_NEW_PARTICIPANTS_PER_IP, now its default): a lab session raises it."""

import django.core.validators
from django.db import migrations, models

import annotation.conf


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_codebook_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="new_participants_per_address",
            field=models.PositiveIntegerField(
                default=annotation.conf.new_participants_per_ip,
                help_text="At most this many new Prolific participants may join from one network "
                "address in an hour (0 = no limit); more are refused, and the refusals are shown "
                "on the progress page. Raise it for a lab session where everyone shares one "
                "address.",
                validators=[django.core.validators.MaxValueValidator(100000)],
            ),
        ),
    ]
