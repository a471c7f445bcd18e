"""The critical-failure codebook becomes versions: the shipped codebook
(annotation/codebook.py) is version 1, and every existing critical-failure study names it."""

import hashlib
import json

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from annotation.codebook import CODEBOOK


def shipped_codebook_is_version_1(apps, schema_editor):
    CodebookVersion = apps.get_model("annotation", "CodebookVersion")
    Study = apps.get_model("annotation", "Study")
    content = json.loads(json.dumps(CODEBOOK, ensure_ascii=False))
    blob = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    version = CodebookVersion.objects.create(
        number=1,
        content=content,
        sha256=hashlib.sha256(blob.encode("utf-8")).hexdigest(),
        note="shipped codebook",
    )
    Study.objects.filter(form_type="critical_failure").update(codebook_version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_text_limits"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="CodebookVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField(editable=False)),
                (
                    "note",
                    models.CharField(blank=True, help_text="what changed, and why", max_length=500),
                ),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                ("is_demo", models.BooleanField(default=False, help_text="demo data (make demo)")),
                (
                    "content",
                    models.JSONField(
                        help_text="definition, question, l1_note, kinds, acceptable, critical_examples, acceptable_examples (the shape of annotation/codebook.py)"
                    ),
                ),
                ("sha256", models.CharField(editable=False, max_length=64, unique=True)),
                (
                    "author",
                    models.ForeignKey(
                        blank=True,
                        editable=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["number"],
            },
        ),
        migrations.AddField(
            model_name="study",
            name="codebook_version",
            field=models.ForeignKey(
                blank=True,
                help_text="The codebook version the annotators read (a critical-failure study; empty: the shipped codebook, version 1).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="studies",
                to="annotation.codebookversion",
            ),
        ),
        migrations.AddConstraint(
            model_name="codebookversion",
            constraint=models.UniqueConstraint(fields=("number",), name="codebook_version_number"),
        ),
        migrations.RunPython(shipped_codebook_is_version_1, migrations.RunPython.noop),
    ]
