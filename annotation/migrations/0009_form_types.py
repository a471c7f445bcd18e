# Study form types (annotation.form_types): the study's form type and its settings, a second
# generation for pairwise items, a form type's known answer and item context, the answer.
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_study_rounds"),
        ("benchmarks", "0006_generator_checkpoint"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="form_type",
            field=models.CharField(
                default="critical_failure",
                help_text="The item form: a name in annotation.form_types (critical_failure, "
                "rating, customplans, pairwise, solve).",
                max_length=40,
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="form_config",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The form type's settings (e.g. a rating scale's dimensions), checked "
                "by it.",
            ),
        ),
        migrations.AddField(
            model_name="studyitem",
            name="generation_b",
            field=models.ForeignKey(
                blank=True,
                help_text="The second system's generation (pairwise preference items).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="study_items_b",
                to="benchmarks.generation",
            ),
        ),
        migrations.AddField(
            model_name="studyitem",
            name="expected_label",
            field=models.JSONField(
                blank=True,
                help_text="Known answer of a form type other than critical failure.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="studyitem",
            name="context",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="What the form type shows or scores with: a customization hint, a "
                "solve item's scoring record.",
            ),
        ),
        migrations.AddField(
            model_name="annotation",
            name="label",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RemoveConstraint(
            model_name="studyitem",
            name="studyitem_known_answer_required",
        ),
        migrations.AddConstraint(
            model_name="studyitem",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind", "regular"),
                    ("expected_has_failure__isnull", False),
                    ("expected_label__isnull", False),
                    _connector="OR",
                ),
                name="studyitem_known_answer_required",
            ),
        ),
    ]
