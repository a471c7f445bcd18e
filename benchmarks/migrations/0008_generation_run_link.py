"""A generation knows the generation run that asked for it (``Generation.run``), so a run's
tokens and cost are counted from its generations instead of added to the run row as replies
come. Existing generations are linked to the run of their generator that was working when they
were made (on the run's dataset, between its start and its end); imported ones stay unlinked.
The run rows' counters are left as they are."""

import django.db.models.deletion
from django.db import migrations, models
from django.utils import timezone


def link_generations(apps, schema_editor):
    Run = apps.get_model("benchmarks", "GenerationRun")
    Generation = apps.get_model("benchmarks", "Generation")
    now = timezone.now()
    for run in Run.objects.exclude(started_at=None).order_by("started_at", "id"):
        Generation.objects.filter(
            run=None,
            generator_id=run.generator_id,
            procedure__dataset_id=run.dataset_id,
            created_at__gte=run.started_at,
            created_at__lte=run.finished_at or now,
        ).update(run=run)


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0007_generation_outputs_and_scoring")]

    operations = [
        migrations.AddField(
            model_name="generation",
            name="run",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="generations",
                to="benchmarks.generationrun",
            ),
        ),
        migrations.RunPython(link_generations, migrations.RunPython.noop),
    ]
