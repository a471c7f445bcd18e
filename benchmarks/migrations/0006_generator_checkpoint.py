from django.db import migrations, models

import benchmarks.checkpoints


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0005_generationrun_parse_profile"),
    ]

    operations = [
        migrations.AddField(
            model_name="generator",
            name="checkpoint",
            field=models.JSONField(
                blank=True, default=dict, validators=[benchmarks.checkpoints.checkpoint_validator]
            ),
        ),
    ]
