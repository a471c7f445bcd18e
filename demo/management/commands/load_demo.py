"""Load the demo data transcribed from the paper (demo/fixtures/demo) and the demo users.

The fixtures go through the regular import commands, so the demo exercises the same code paths
as a real import:

- ``import_procedures procedures.jsonl --dataset how2bench-demo``
- ``import_generations generations/<generator>.jsonl --generator <generator> --dataset how2bench-demo``
- ``import_judgments judgments/<generator>.jsonl --judge paper-published --generator <generator>``
- ``create_study`` for a small open demo study over the Gemini 2.5 Pro generations
- a finished study over every demo generation, labelled by three SIMULATED annotators
  (:mod:`demo.studies`), an uploaded label set (:mod:`demo.label_sets`), and a finished mining
  batch over the bundled corpus whose LLM stages
  replay recorded replies (:mod:`demo.mining`)
- a judge on the ``replay`` backend, ``demo-replay``, that answers the demo generations from
  recorded replies (:mod:`demo.replay_judge`), so a judge run launched from the console runs

Running it again changes nothing. It also creates the demo users ``researcher`` (group
researcher) and ``annotator`` (group annotator); their passwords come from
``DEMO_RESEARCHER_PASSWORD`` / ``DEMO_ANNOTATOR_PASSWORD`` or are generated once and kept in
``var/demo-<user>-password`` (mode 0600).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.urls import reverse

from core.roles import ADMIN, ANNOTATOR, RESEARCHER, role_assign

FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
DEMO_DATASET = "how2bench-demo"
DEMO_JUDGE = "paper-published"
DEMO_STUDY = "Demo study: the paper's examples"
DEMO_STUDY_GENERATOR = "gemini-2.5-pro"
DEMO_MIN_SECONDS = 20

# username -> (group, environment variable that may set its password)
DEMO_USERS: dict[str, tuple[str, str]] = {
    "admin": (ADMIN, "DEMO_ADMIN_PASSWORD"),
    "researcher": (RESEARCHER, "DEMO_RESEARCHER_PASSWORD"),
    "annotator": (ANNOTATOR, "DEMO_ANNOTATOR_PASSWORD"),
}


def demo_password_file(*, username: str) -> Path:
    return Path(settings.VAR_DIR) / f"demo-{username}-password"


def demo_password(*, username: str, create: bool = True) -> str | None:
    """The demo password for ``username``: from its environment variable, else from
    ``var/demo-<user>-password``, else (when ``create``) a new random one written there (0600)."""
    from_env = os.environ.get(DEMO_USERS[username][1], "").strip()
    if from_env:
        return from_env
    path = demo_password_file(username=username)
    if path.exists():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    if not create:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(12)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(value + "\n")
    os.replace(tmp, path)
    return value


@transaction.atomic
def demo_user_ensure(*, username: str, superuser: bool = False):
    """Create (or bring back in line) a demo user: its role, flags and demo password."""
    password = demo_password(username=username)
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    changed = created
    if superuser and not user.is_superuser:
        user.is_superuser = True
        changed = True
    if not user.is_active:
        user.is_active = True
        changed = True
    if created or not user.check_password(password):
        user.set_password(password)
        changed = True
    if changed:
        user.save()
    role_assign(user=user, role=DEMO_USERS[username][0])
    return user, created


def demo_study_ensure(*, dataset: str, stdout) -> str | None:
    """A small open study over the paper's Gemini 2.5 Pro generations, so the annotator demo
    login has work. Created through the annotation app's own command (benchmarks does not
    import annotation); kept if it exists. Returns its entry path."""
    from django.apps import apps
    from django.urls import reverse

    study_model = apps.get_model("annotation", "Study")
    study = study_model.objects.filter(name=DEMO_STUDY).first()
    if study is None:
        call_command(
            "create_study",
            name=DEMO_STUDY,
            dataset=f"{dataset}@v1",
            generator=DEMO_STUDY_GENERATOR,
            limit=50,
            overlap=3,
            items_per_participant=4,
            min_seconds=DEMO_MIN_SECONDS,
            attention_rate=0.0,
            entry="both",
            stdout=stdout,
        )
        study = study_model.objects.get(name=DEMO_STUDY)
    return reverse("annotation:enter", args=[study.slug])


class Command(BaseCommand):
    help = "Load the paper's demo procedures, generations and verdicts into dataset how2bench-demo, and the demo users."

    def add_arguments(self, parser):
        parser.add_argument(
            "--fixtures", default=str(FIXTURES_DIR), help="Folder with the demo JSONL files."
        )
        parser.add_argument(
            "--dataset", default=DEMO_DATASET, help="Dataset name (default: %(default)s)."
        )

    def handle(self, *args, **options):
        folder = Path(options["fixtures"])
        dataset = options["dataset"]
        procedures = folder / "procedures.jsonl"
        if not procedures.is_file():
            raise CommandError(f"demo fixtures not found: {procedures} is missing")
        quiet = {"stdout": self.stdout, "stderr": self.stderr, "verbosity": options["verbosity"]}

        self.stdout.write(f"Loading the paper's demo data into dataset '{dataset}' from {folder}")
        call_command("import_procedures", str(procedures), dataset=dataset, **quiet)

        for path in sorted((folder / "generations").glob("*.jsonl")):
            call_command(
                "import_generations", str(path), generator=path.stem, dataset=dataset, **quiet
            )

        for path in sorted((folder / "judgments").glob("*.jsonl")):
            call_command(
                "import_judgments",
                str(path),
                judge=DEMO_JUDGE,
                generator=path.stem,
                dataset=dataset,
                **quiet,
            )

        for username in ("researcher", "annotator"):
            _, created = demo_user_ensure(username=username)
            self.stdout.write(f"  demo user '{username}' {'created' if created else 'kept'}")
        entry = demo_study_ensure(dataset=dataset, stdout=self.stdout)
        self.stdout.write(
            f"  demo study '{DEMO_STUDY}': annotators enter at {entry}?PROLIFIC_PID=demo1&STUDY_ID=demo&SESSION_ID=s1 "
            f"or logged in as 'annotator' ({DEMO_MIN_SECONDS} s minimum per item in the demo; the paper used 90)"
        )
        from demo.mining import DEMO_BATCH, demo_batch_ensure
        from demo.studies import SIMULATED_STUDY, simulated_study_ensure

        finished = simulated_study_ensure(dataset=dataset, judge=DEMO_JUDGE)
        self.stdout.write(
            f"  finished study '{SIMULATED_STUDY}' (3 SIMULATED annotators): {finished.description}"
        )
        from demo.prompt_versions import JUDGE_V1, prompt_versions_demo_ensure

        prompt_versions_demo_ensure(study=finished, published_judge=DEMO_JUDGE)
        self.stdout.write(
            "  two judge prompt versions (DEMO DATA, simulated verdicts) side by side at "
            f"/judging/compare/validation/prompt-versions/?study={finished.pk}&judge={JUDGE_V1}"
        )
        from demo.replace import JUDGE as SIM_JUDGE
        from demo.replace import replaceability_demo_ensure

        replaced = replaceability_demo_ensure()
        self.stdout.write(
            f"  SIMULATED study '{replaced.name}': an alt-test at /judging/compare/validation/"
            f"?study={replaced.pk}&judge={SIM_JUDGE} and a PPI-corrected ranking at "
            f"/judging/compare/rankings/ppi/?study={replaced.pk}&judge={SIM_JUDGE} (demo data)"
        )
        from demo.label_sets import label_set_demo_ensure

        uploaded = label_set_demo_ensure()
        self.stdout.write(
            f"  uploaded label set '{uploaded.name}': its verdicts at "
            f"/judging/compare/label-sets/{uploaded.pk}/ (SIMULATED labels)"
        )
        from demo.budget import JUDGE as BUDGET_JUDGE
        from demo.budget import plan_path, planned_study_ensure

        admin, _ = demo_user_ensure(username="admin", superuser=True)
        planned = planned_study_ensure(label_set=uploaded, admin=admin)
        escalation = reverse("validation:escalation")
        self.stdout.write(
            f"  a plan from that label set at {plan_path(uploaded)}; SIMULATED study "
            f"'{planned.name}' made from it, drawn where '{BUDGET_JUDGE}' is unsure and stopped "
            f"at its target: its report at {reverse('annotation:report', args=[planned.pk])}, "
            f"its escalation threshold at {escalation}?study={planned.pk}&judge={BUDGET_JUDGE}"
        )
        from demo.replay_judge import REPLAY_JUDGE, replay_judge_ensure

        replay_judge_ensure()
        self.stdout.write(
            f"  judge '{REPLAY_JUDGE}' answers from recorded replies (backend 'replay', no model "
            f"called): launch a judge run over dataset '{dataset}' at /admin/judging/judgerun/launch/"
        )
        batch = demo_batch_ensure()
        self.stdout.write(
            f"  mining batch '{DEMO_BATCH}': {batch.status}, {batch.n_done}/{batch.n_total} "
            "documents; its LLM stages REPLAYED recorded replies (backend 'replay', no model called)"
        )
        from demo.packs import demo_packs_ensure

        for line in demo_packs_ensure(stdout=self.stdout):
            self.stdout.write(f"  scorer-pack worked examples, {line}")
        from demo.pack_results import demo_pack_results_ensure

        for line in demo_pack_results_ensure(stdout=self.stdout):
            self.stdout.write(f"  pack results pages (/packs/), worked examples: {line}")
        from demo.customplans_study import customplans_study_ensure

        cp_study = customplans_study_ensure()
        if cp_study is not None:
            self.stdout.write(
                f"  SIMULATED CustomPlans study '{cp_study.name}' (worked examples): "
                f"/packs/customplans/results/?study={cp_study.pk}"
            )
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))
