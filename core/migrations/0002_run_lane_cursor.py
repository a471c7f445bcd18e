from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("core", "0001_run_lanes")]

    operations = [
        migrations.AddField(
            model_name="runlane",
            name="cursor",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="the lane's position in its run's ordered work (run types that walk)",
            ),
        ),
    ]
