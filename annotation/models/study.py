"""The annotation study data model: studies over generations, participants, assignments,
annotations, drafts and attention-check results (seed 000 §4.3, appendix C.1)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation import conf
from annotation.labels import MAX_COMMENTS, MAX_EXPLANATION, MAX_STUDY_DESCRIPTION
from benchmarks.models import Generation

MAX_NEW_PARTICIPANTS_PER_ADDRESS = 100_000


def new_slug() -> str:
    return secrets.token_urlsafe(9)


def new_code() -> str:
    return secrets.token_hex(4).upper()


class Study(models.Model):
    class Sampling(models.TextChoices):
        LEAST_ANNOTATED = "least_annotated", "Least annotated first"
        BY_TOPIC = "by_topic", "Balanced mix of topics per participant"
        BY_GENERATOR = "by_generator", "Balanced mix of generators per participant"
        BY_TOPIC_AND_GENERATOR = (
            "by_topic_and_generator",
            "Balanced mix of topics and of generators per participant",
        )
        SEEDED = "seeded", "Fixed seeded order"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class Entry(models.TextChoices):
        PROLIFIC = "prolific", "Prolific link"
        ACCOUNT = "account", "Account"
        BOTH = "both", "Prolific link or account"

    name = models.CharField(max_length=200)
    slug = models.SlugField(
        max_length=32, unique=True, default=new_slug, help_text="Public part of the study URL."
    )
    description = models.TextField(blank=True, max_length=MAX_STUDY_DESCRIPTION)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    entry = models.CharField(max_length=8, choices=Entry.choices, default=Entry.PROLIFIC)
    prolific_study_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="Prolific's STUDY_ID; when set, entry links must carry it.",
    )
    overlap = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)], help_text="Annotators per item (k)."
    )
    items_per_participant = models.PositiveIntegerField(
        default=20, validators=[MinValueValidator(1)]
    )
    min_seconds_per_item = models.PositiveIntegerField(default=90)
    attention_rate = models.FloatField(
        default=0.1,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Planted attention items per regular item (0.1 = one after every 10).",
    )
    attention_warn_after = models.PositiveSmallIntegerField(
        default=1, help_text="Warn after this many failed checks."
    )
    attention_screen_after = models.PositiveSmallIntegerField(
        default=2,
        help_text="End the session (screened out) after this many failed checks; 0 = never.",
    )
    qualification_pass_threshold = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of qualification items to answer correctly.",
    )
    completion_code = models.CharField(max_length=64, default=new_code)
    screened_out_code = models.CharField(max_length=64, default=new_code)
    assignment_timeout_minutes = models.PositiveIntegerField(
        default=30, validators=[MinValueValidator(1)]
    )
    show_resources = models.BooleanField(
        default=False,
        help_text="Show the procedure's resources on the item page. Off by default: a "
        "participant sees what the judge sees (goal, L1 and L2 steps), as in the paper (C.1).",
    )
    click_through_l1 = models.BooleanField(
        default=True,
        help_text="Participants also click through every L1 (reference) step before submitting, "
        "as in the paper's interface (Figures 7-11); every L2 step always.",
    )
    form_type = models.CharField(
        max_length=40,
        default="critical_failure",
        help_text="The item form: a name in annotation.form_types (critical_failure, rating, "
        "customplans, pairwise, solve).",
    )
    form_config = models.JSONField(
        default=dict,
        blank=True,
        help_text="The form type's settings (e.g. a rating scale's dimensions), checked by it.",
    )
    # a paid study's flow: item sampling, silent gold
    sampling = models.CharField(
        max_length=32,
        choices=Sampling.choices,
        default=Sampling.LEAST_ANNOTATED,
        help_text="Which item a participant gets next (annotation.rules.SAMPLING).",
    )
    sampling_seed = models.PositiveIntegerField(
        default=0, help_text="Seed of the fixed seeded order (same seed, same order)."
    )
    gold_rate = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Silent gold items per regular item (0.2 = one after every 5): known answers "
        "shown like any other item, scored on the quality page, never blocking.",
    )
    # spending the human budget (validation.active, validation.ppi_plan): where the items came
    # from and when to stop
    design = models.JSONField(
        default=dict,
        blank=True,
        help_text="How the study's items were chosen (validation.active): the plan it was made "
        "from, the judge and its verdicts' population, the sampling (uniform or by the judge's "
        "uncertainty) and an escalation threshold. Empty: chosen by hand.",
    )
    target_half_width = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="Stop handing out new items once the corrected How2Score's 95% interval is "
        "at most this wide on each side (0.05 = ±5 points). The rule looks at the width only. "
        "Empty: no target.",
    )
    target_reached_at = models.DateTimeField(
        null=True, blank=True, help_text="When the interval first reached the target."
    )
    target_resumed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a researcher resumed the study after the target was reached (it is "
        "not stopped by the target again).",
    )
    target_reached_interval = models.JSONField(
        default=dict,
        blank=True,
        help_text="The interval that reached the target, as it was then (validation.stopping): "
        "the corrected How2Score, its interval, half-width and number of labels.",
    )
    new_participants_per_address = models.PositiveIntegerField(
        default=conf.new_participants_per_ip,
        validators=[MaxValueValidator(MAX_NEW_PARTICIPANTS_PER_ADDRESS)],
        help_text="At most this many new Prolific participants may join from one network "
        "address in an hour (0 = no limit); more are refused, and the refusals are shown on "
        "the progress page. Raise it for a lab session where everyone shares one address.",
    )
    codebook_version = models.ForeignKey(
        "annotation.CodebookVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="studies",
        help_text="The codebook version the annotators read (a critical-failure study; "
        "empty: the shipped codebook, version 1).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("annotation:study_progress", args=[self.pk])

    def clean(self) -> None:
        super().clean()
        from annotation.form_types.registry import FormConfigError, form_checked

        try:
            self.form_config = form_checked(self.form_type, self.form_config).config
        except FormConfigError as exc:
            key = "form_type" if exc.field == "form_type" else "form_config"
            message = exc.message if exc.field == key else f"{exc.field}: {exc.message}"
            raise ValidationError({key: message}) from exc

    @property
    def accepts_prolific(self) -> bool:
        return self.entry in (self.Entry.PROLIFIC, self.Entry.BOTH)

    @property
    def accepts_accounts(self) -> bool:
        return self.entry in (self.Entry.ACCOUNT, self.Entry.BOTH)

    @property
    def watching_target(self) -> bool:
        """The study has a target half-width it has not reached yet: its interval is checked as
        labels arrive (validation.stopping). Once reached, it is never checked again, resumed
        or not."""
        return self.target_half_width is not None and self.target_reached_at is None

    @property
    def stopped_by_target(self) -> bool:
        """Its interval reached the target and nobody has resumed it since."""
        return self.target_reached_at is not None and self.target_resumed_at is None


class StudyItem(models.Model):
    """One generation shown in a study: goal + L1 (reference) + L2 (generated steps)."""

    class Kind(models.TextChoices):
        REGULAR = "regular", "Regular"
        ATTENTION = "attention", "Attention check (planted)"
        TRAINING = "training", "Training example"
        QUALIFICATION = "qualification", "Qualification"
        GOLD = "gold", "Silent gold (known answer, looks like any item)"

    # indexed by the constraint and indexes that lead with it (one index fewer to write a claim)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items", db_index=False)
    generation = models.ForeignKey(Generation, on_delete=models.PROTECT, related_name="study_items")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.REGULAR)
    position = models.PositiveIntegerField(default=0)
    expected_has_failure = models.BooleanField(
        null=True, blank=True, help_text="Known answer (attention, training, qualification)."
    )
    # form types other than critical failure (annotation.form_types)
    generation_b = models.ForeignKey(
        Generation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="study_items_b",
        help_text="The second system's generation (pairwise preference items).",
    )
    expected_label = models.JSONField(
        null=True, blank=True, help_text="Known answer of a form type other than critical failure."
    )
    context = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the form type shows or scores with: a customization hint, a solve "
        "item's scoring record.",
    )
    explanation = models.TextField(
        blank=True, max_length=MAX_EXPLANATION, help_text="Shown with training examples."
    )
    # Live assignments (served or submitted, not expired); never above study.overlap for regular items.
    n_assigned = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(2)],
        help_text="Qualification items: the attempt they belong to (2: the second try, after "
        "the training again).",
    )
    sample_rank = models.PositiveIntegerField(
        default=0, help_text="Place in the study's fixed seeded order (annotation.rules)."
    )
    inclusion_probability = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="The probability with which this item was drawn for people (sampling by the "
        "judge's uncertainty, validation.active); the corrected score weighs its label by its "
        "inverse. Empty: drawn uniformly, or chosen by hand.",
    )

    class Meta:
        ordering = ["study_id", "kind", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "generation", "kind"], name="studyitem_unique_generation_kind"
            ),
            models.CheckConstraint(
                condition=Q(kind="regular")
                | Q(expected_has_failure__isnull=False)
                | Q(expected_label__isnull=False),
                name="studyitem_known_answer_required",
            ),
        ]
        indexes = [
            models.Index(
                fields=["study", "kind", "n_assigned", "position", "id"],
                name="studyitem_pool_order_idx",
            ),
            models.Index(  # the fixed seeded order (sampling "seeded")
                fields=["study", "kind", "sample_rank", "id"], name="studyitem_seeded_order_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} item #{self.pk} (study #{self.study_id})"


class Participant(models.Model):
    class Stage(models.TextChoices):
        CONSENT = "consent", "Consent"
        TRAINING = "training", "Training"
        QUALIFICATION = "qualification", "Qualification"
        WORKING = "working", "Working"
        DONE = "done", "Done"
        SCREENED_OUT = "screened_out", "Screened out"
        DECLINED = "declined", "Declined consent"
        RETURNED = "returned", "Returned or timed out on Prolific"

    # stages a participant does not come back from: nothing is left for them to do
    ENDED_STAGES = frozenset({"done", "screened_out", "declined", "returned"})

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    prolific_pid = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    # the client address of the first entry (new participants per address are rate-limited)
    entry_ip = models.GenericIPAddressField(null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="study_participations",
    )
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.CONSENT)
    consented_at = models.DateTimeField(null=True, blank=True)
    qualification_score = models.FloatField(null=True, blank=True)
    attention_failures = models.PositiveSmallIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0, help_text="Regular items submitted.")
    n_attention_served = models.PositiveIntegerField(default=0)
    n_gold_served = models.PositiveIntegerField(default=0)
    qualification_attempt = models.PositiveSmallIntegerField(
        default=1, help_text="The comprehension check attempt in progress (2: second try)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=~Q(prolific_pid=""),
                name="participant_unique_pid",
            ),
            models.UniqueConstraint(
                fields=["study", "user"],
                condition=Q(user__isnull=False),
                name="participant_unique_user",
            ),
            models.CheckConstraint(
                condition=~Q(prolific_pid="") | Q(user__isnull=False),
                name="participant_has_identity",
            ),
        ]

    def __str__(self) -> str:
        return self.prolific_pid or f"user:{self.user_id}"

    @property
    def label(self) -> str:
        return self.prolific_pid or f"user-{self.user_id}"


class Assignment(models.Model):
    class State(models.TextChoices):
        ACTIVE = "active", "Active"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Returned to pool"

    participant = models.ForeignKey(  # indexed by the constraints and indexes that lead with it
        Participant, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="assignments")
    state = models.CharField(max_length=10, choices=State.choices, default=State.ACTIVE)
    served_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    active_ms = models.PositiveBigIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["participant_id", "served_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "item"], name="assignment_once_per_participant_item"
            ),
            models.UniqueConstraint(
                fields=["participant"],
                condition=Q(state="active"),
                name="assignment_one_active_per_participant",
            ),
        ]
        indexes = [
            models.Index(fields=["state", "last_seen_at"], name="assignment_state_seen_idx"),
            models.Index(fields=["participant", "state"], name="assignment_part_state_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.participant} → item {self.item_id} ({self.state})"


class Annotation(models.Model):
    """A submitted label. ``failures``: ``[{description, l1_steps: [int], l2_steps: [int]}]``."""

    assignment = models.OneToOneField(
        Assignment, on_delete=models.CASCADE, related_name="annotation"
    )
    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="annotations"
    )
    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="annotations")
    has_failure = models.BooleanField()
    failures = models.JSONField(default=list, blank=True)
    # the answer of a form type other than critical failure (annotation.form_types)
    label = models.JSONField(default=dict, blank=True)
    comments = models.TextField(blank=True, max_length=MAX_COMMENTS)
    wall_ms = models.PositiveBigIntegerField()
    active_ms = models.PositiveBigIntegerField()
    interface_checks = models.JSONField(default=dict, blank=True)
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["item_id", "submitted_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(has_failure=True) | Q(failures=[]),
                name="annotation_no_failures_when_none",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.participant} on item {self.item_id}: {'failure' if self.has_failure else 'ok'}"
        )


class Draft(models.Model):
    """Autosaved, unsubmitted state of an item page (restored on refresh or another device)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"draft of assignment {self.assignment_id}"


class AttentionCheckResult(models.Model):
    class Kind(models.TextChoices):
        PLANTED = "planted", "Planted item"
        INTERFACE = "interface", "Interface (goal acknowledged, every step read)"
        QUALIFICATION = "qualification", "Qualification item"

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="attention_results"
    )
    assignment = models.ForeignKey(
        Assignment,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="attention_results",
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    passed = models.BooleanField()
    detail = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {'pass' if self.passed else 'fail'} for {self.participant}"
