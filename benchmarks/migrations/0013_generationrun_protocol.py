"""Generation runs choose a paper's protocol: ``protocol`` and its options."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0012_provider_batch_failed_keys")]

    operations = [
        migrations.AddField(
            model_name="generationrun",
            name="protocol",
            field=models.CharField(
                default="how2everything",
                help_text=(
                    "Generation protocol: how2everything (H.2) or a scorer pack's paper protocol."
                ),
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="generationrun",
            name="protocol_options",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The protocol's named options; empty: its defaults.",
            ),
        ),
    ]
