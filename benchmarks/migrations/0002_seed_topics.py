from django.db import migrations

from benchmarks.topics import TOPICS


def seed_topics(apps, schema_editor):
    Topic = apps.get_model("benchmarks", "Topic")
    for position, (slug, name) in enumerate(TOPICS):
        Topic.objects.update_or_create(slug=slug, defaults={"name": name, "position": position})


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0001_initial")]
    operations = [migrations.RunPython(seed_topics, migrations.RunPython.noop)]
