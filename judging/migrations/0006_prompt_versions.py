"""Judge prompts become versions: the shipped H.3 text (judging/prompts/judge_h3.txt) is
version 1 of ``judge_h3``, and every judge of that prompt names it. The text is the same, so
every judge id stays what it was."""

import hashlib
from pathlib import Path

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import judging.models.prompts

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


def shipped_prompts_are_version_1(apps, schema_editor):
    PromptVersion = apps.get_model("judging", "PromptVersion")
    Judge = apps.get_model("judging", "Judge")
    names = set(Judge.objects.values_list("prompt_template", flat=True)) | {"judge_h3"}
    for name in sorted(names):
        path = PROMPTS_DIR / f"{name}.txt"
        if not path.is_file():
            continue  # a judge of an unknown template keeps none (its runs refuse, as before)
        text = path.read_text(encoding="utf-8")
        version = PromptVersion.objects.create(
            name=name,
            number=1,
            text=text,
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            note="shipped text",
        )
        Judge.objects.filter(prompt_template=name).update(prompt_version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0005_estimates_and_leaderboards_are_runs"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="judge",
            name="prompt_template",
            field=models.CharField(
                default="judge_h3",
                help_text="the prompt's name; without a version chosen, its shipped text (version 1)",
                max_length=64,
            ),
        ),
        migrations.CreateModel(
            name="PromptVersion",
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
                    "name",
                    models.CharField(
                        default="judge_h3",
                        help_text="the prompt this is a version of (judge_h3: the H.3 judge prompt)",
                        max_length=64,
                        validators=[judging.models.prompts._name_valid],
                    ),
                ),
                (
                    "text",
                    models.TextField(
                        help_text="the template: {goal}, {reference_steps} and {steps} are filled in; 'Return only valid json.' is appended when sent"
                    ),
                ),
                ("sha256", models.CharField(editable=False, max_length=64)),
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
                "ordering": ["name", "number"],
            },
        ),
        migrations.AddField(
            model_name="judge",
            name="prompt_version",
            field=models.ForeignKey(
                blank=True,
                help_text="the prompt text this judge sends (its judge id hashes the text)",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judges",
                to="judging.promptversion",
            ),
        ),
        migrations.AddConstraint(
            model_name="promptversion",
            constraint=models.UniqueConstraint(
                fields=("name", "number"), name="prompt_version_number"
            ),
        ),
        migrations.AddConstraint(
            model_name="promptversion",
            constraint=models.UniqueConstraint(
                fields=("name", "sha256"), name="prompt_version_text_once"
            ),
        ),
        migrations.RunPython(shipped_prompts_are_version_1, migrations.RunPython.noop),
    ]
