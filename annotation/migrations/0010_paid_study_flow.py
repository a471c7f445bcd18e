# A paid study's flow: item sampling strategies (sampling, seed, seeded rank), silent
# gold items (kind gold, gold_rate, n_gold_served), the comprehension check's second attempt
# (StudyItem.attempt, Participant.qualification_attempt), excluded participants refused at entry.
import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0009_form_types"),
    ]

    operations = [
        migrations.AddField(
            model_name="prolificcall",
            name="participant_ids",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Prolific ids a group call added (the entry page refuses those of the "
                "exclusion group).",
            ),
        ),
        migrations.AddField(
            model_name="participant",
            name="n_gold_served",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="participant",
            name="qualification_attempt",
            field=models.PositiveSmallIntegerField(
                default=1, help_text="The comprehension check attempt in progress (2: second try)."
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="gold_rate",
            field=models.FloatField(
                default=0.0,
                help_text="Silent gold items per regular item (0.2 = one after every 5): known answers shown like any other item, scored on the quality page, never blocking.",
                validators=[
                    django.core.validators.MinValueValidator(0.0),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="sampling",
            field=models.CharField(
                choices=[
                    ("least_annotated", "Least annotated first"),
                    ("by_topic", "Balanced mix of topics per participant"),
                    ("by_generator", "Balanced mix of generators per participant"),
                    ("seeded", "Fixed seeded order"),
                ],
                default="least_annotated",
                help_text="Which item a participant gets next (annotation.rules.SAMPLING).",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="sampling_seed",
            field=models.PositiveIntegerField(
                default=0, help_text="Seed of the fixed seeded order (same seed, same order)."
            ),
        ),
        migrations.AddField(
            model_name="studyitem",
            name="attempt",
            field=models.PositiveSmallIntegerField(
                default=1,
                help_text="Qualification items: the attempt they belong to (2: the second try, after the training again).",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(2),
                ],
            ),
        ),
        migrations.AddField(
            model_name="studyitem",
            name="sample_rank",
            field=models.PositiveIntegerField(
                default=0, help_text="Place in the study's fixed seeded order (annotation.rules)."
            ),
        ),
        migrations.AlterField(
            model_name="entryevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("session_conflict", "Another Prolific session for a participant in progress"),
                    ("rate_limited", "Too many new participants from one address"),
                    ("excluded", "Excluded participant refused (earlier round or group)"),
                ],
                max_length=24,
            ),
        ),
        migrations.AlterField(
            model_name="studyitem",
            name="kind",
            field=models.CharField(
                choices=[
                    ("regular", "Regular"),
                    ("attention", "Attention check (planted)"),
                    ("training", "Training example"),
                    ("qualification", "Qualification"),
                    ("gold", "Silent gold (known answer, looks like any item)"),
                ],
                default="regular",
                max_length=16,
            ),
        ),
        migrations.AddIndex(
            model_name="studyitem",
            index=models.Index(
                fields=["study", "kind", "sample_rank", "id"], name="studyitem_seeded_order_idx"
            ),
        ),
    ]
