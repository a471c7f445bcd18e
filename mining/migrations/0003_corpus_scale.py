# Corpus-scale mining: a batch reads a stored file, a shard directory or a glob instead of an upload.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("mining", "0002_batch_is_a_run")]

    operations = [
        migrations.AddField(
            model_name="miningbatch",
            name="source_pattern",
            field=models.CharField(blank=True, max_length=1000),
        ),
        migrations.AlterField(
            model_name="miningbatch",
            name="source_file",
            field=models.FileField(blank=True, max_length=500, upload_to="mining/uploads/%Y/%m/"),
        ),
    ]
