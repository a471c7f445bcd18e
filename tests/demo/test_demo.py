"""The demo: fixtures transcribed from the paper, load_demo and ensure_demo_admin (run_demo is in
test_run_demo.py)."""

from __future__ import annotations

import html
import io
import json
import re
import stat
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmarks.topics import TOPICS

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo" / "fixtures" / "demo"
SEED = ROOT.parent / "shared" / "seeds" / "000_8e61bafd7a78fa0b.txt"  # shared/ beside the clone
QUALITATIVE = (
    "paper-table17-crime-law",
    "paper-table18-science-math-tech",
    "paper-table19-art-design",
)
FRONTIER = ("claude-opus-4.5", "gpt-5", "gemini-2.5-pro")
# Verdicts printed in Tables 1 and 17-19: (example, generator) -> has a critical failure.
PUBLISHED = {
    ("paper-table1-crime-law", "gemini-2.5-pro"): True,
    ("paper-table1-food-dining", "qwen3-8b-instruct"): True,
    ("paper-table17-crime-law", "claude-opus-4.5"): False,
    ("paper-table17-crime-law", "gpt-5"): False,
    ("paper-table17-crime-law", "gemini-2.5-pro"): True,
    ("paper-table18-science-math-tech", "claude-opus-4.5"): False,
    ("paper-table18-science-math-tech", "gpt-5"): True,
    ("paper-table18-science-math-tech", "gemini-2.5-pro"): True,
    ("paper-table19-art-design", "claude-opus-4.5"): False,
    ("paper-table19-art-design", "gpt-5"): False,
    ("paper-table19-art-design", "gemini-2.5-pro"): False,
}


def read_jsonl(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name} line {number} is blank"
        rows.append(json.loads(line))
    return rows


def is_str_list(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, str) and v.strip() == v and v for v in value
    )


@pytest.fixture(scope="module")
def procedures() -> dict[str, dict]:
    rows = read_jsonl(DEMO / "procedures.jsonl")
    by_id = {r["source_example_id"]: r for r in rows}
    assert len(by_id) == len(rows), "duplicate source_example_id in procedures.jsonl"
    return by_id


@pytest.fixture(scope="module")
def generations() -> dict[str, list[dict]]:
    return {p.stem: read_jsonl(p) for p in sorted((DEMO / "generations").glob("*.jsonl"))}


@pytest.fixture(scope="module")
def judgments() -> dict[str, list[dict]]:
    return {p.stem: read_jsonl(p) for p in sorted((DEMO / "judgments").glob("*.jsonl"))}


# --- fixtures ------------------------------------------------------------------------------------


def test_procedures_follow_the_example_schema(procedures):
    topic_names = {name for _, name in TOPICS}
    assert len(procedures) == 19
    for eid, rec in procedures.items():
        assert re.fullmatch(r"paper-table\d+-[a-z-]+", eid), eid
        assert rec["schema_version"] == "how2bench.example.v1"
        assert rec["topic"] in topic_names, (eid, rec["topic"])
        assert isinstance(rec["goal"], str) and rec["goal"].strip() == rec["goal"] and rec["goal"]
        assert is_str_list(rec["steps"]) and len(rec["steps"]) >= 4, eid
        assert isinstance(rec["resources"], list) and all(
            isinstance(r, str) and r for r in rec["resources"]
        )
        for text in [rec["goal"], *rec["steps"], *rec["resources"]]:
            assert "<" not in text and "&amp;" not in text, (eid, text)
            assert not re.match(r"^\d+\.", text), (eid, text)  # numbering stripped


def test_table7_has_one_procedure_per_topic(procedures):
    table7 = {eid: r for eid, r in procedures.items() if eid.startswith("paper-table7-")}
    assert len(table7) == 14
    assert sorted(r["topic"] for r in table7.values()) == sorted(name for _, name in TOPICS)
    for slug, name in TOPICS:
        assert procedures[f"paper-table7-{slug}"]["topic"] == name
        assert procedures[f"paper-table7-{slug}"]["resources"], (
            slug
        )  # Table 7 lists resources for every topic
    assert len(procedures["paper-table7-electronics-hardware"]["steps"]) == 10
    assert procedures["paper-table7-crime-law"]["steps"][3] == (
        "Wait 30 days for co-owners to express their desire to purchase your share."
    )


def test_table1_and_qualitative_procedures(procedures):
    for eid in ("paper-table1-crime-law", "paper-table1-food-dining", *QUALITATIVE):
        assert eid in procedures
    # Table 17 shows the Table 7 Crime & Law procedure; Table 1 abridges its goal.
    assert (
        procedures["paper-table17-crime-law"]["steps"]
        == procedures["paper-table7-crime-law"]["steps"]
    )
    assert (
        procedures["paper-table17-crime-law"]["goal"]
        == procedures["paper-table7-crime-law"]["goal"]
    )
    assert "with separate ownership" not in procedures["paper-table1-crime-law"]["goal"]
    assert procedures["paper-table18-science-math-tech"]["steps"][0].startswith(
        "Combine H₂O, 10X PFU Ultra"
    )


def test_generations_reference_procedures(procedures, generations):
    assert set(generations) == {*FRONTIER, "qwen3-8b-instruct"}
    for gid, rows in generations.items():
        for rec in rows:
            assert rec["schema_version"] == "how2bench.generation.v1"
            assert rec["generator_id"] == gid
            proc = procedures[rec["source_example_id"]]
            assert (rec["goal"], rec["steps"], rec["resources"], rec["topic"]) == (
                proc["goal"],
                proc["steps"],
                proc["resources"],
                proc["topic"],
            )
            assert is_str_list(rec["predicted_steps"]) and len(rec["predicted_steps"]) == len(
                proc["steps"]
            )
    for gid in FRONTIER:  # Tables 17-19 show all three frontier models
        assert set(QUALITATIVE) <= {r["source_example_id"] for r in generations[gid]}
    gpt_refusal = next(r for r in generations["gpt-5"] if r["source_example_id"] == QUALITATIVE[1])
    assert gpt_refusal["predicted_steps"][0].startswith("Sorry, I can’t help")


def test_judgments_carry_the_published_verdicts(procedures, generations, judgments):
    assert set(judgments) == set(generations)
    seen = {}
    for gid, rows in judgments.items():
        gen_by_id = {r["source_example_id"]: r for r in generations[gid]}
        assert {r["source_example_id"] for r in rows} == set(gen_by_id)
        for rec in rows:
            eid = rec["source_example_id"]
            assert rec["schema_version"] == "how2bench.judgment.v1"
            assert rec["judge_id"] == "paper-published"
            assert rec["predicted_steps"] == gen_by_id[eid]["predicted_steps"]
            assert rec["reasoning"].strip()
            failures = rec["critical_failures"]
            assert rec["has_failure"] is bool(failures)
            assert rec["n_failures"] == len(failures)
            assert rec["parse_failed"] is False
            n_ref, n_gen = len(procedures[eid]["steps"]), len(rec["predicted_steps"])
            for failure in failures:
                assert failure["failure"].strip()
                assert all(1 <= s <= n_ref for s in failure["L1_steps"]), failure
                assert all(1 <= s <= n_gen for s in failure["L2_steps"]), failure
            seen[(eid, gid)] = rec
    assert {k: v["has_failure"] for k, v in seen.items()} == PUBLISHED
    gemini = seen[("paper-table17-crime-law", "gemini-2.5-pro")]
    assert [f["L1_steps"] for f in gemini["critical_failures"]] == [[4], [4, 5]]
    gpt = seen[("paper-table18-science-math-tech", "gpt-5")]
    assert [f["L1_steps"] for f in gpt["critical_failures"]] == [[1, 2, 3, 4], [2], [1]]
    qwen = seen[("paper-table1-food-dining", "qwen3-8b-instruct")]
    assert qwen["critical_failures"][0]["L1_steps"] == [6] and qwen["critical_failures"][0][
        "L2_steps"
    ] == [6]


@pytest.mark.skipif(not SEED.exists(), reason="the paper's text (seed 000) is not on this machine")
def test_every_transcribed_text_is_in_the_paper(procedures, generations, judgments):
    text = SEED.read_text(encoding="utf-8")
    text = re.sub(r"\s*<sub>\s*2\s*</sub>\s*", "₂", text)
    text = re.sub(r"</?(?:i|b)>", "", text)  # inline markup
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = re.sub(r"\s+", " ", text)
    texts = []
    for rec in procedures.values():
        texts += [rec["goal"], *rec["steps"], *rec["resources"]]
    for rows in generations.values():
        texts += [s for r in rows for s in r["predicted_steps"]]
    for rows in judgments.values():
        texts += [f["failure"] for r in rows for f in r["critical_failures"]]
    missing = [t for t in texts if t not in text]
    assert not missing, missing[:5]


# --- load_demo and ensure_demo_admin --------------------------------------------------------------


@pytest.fixture
def var_dir(settings, tmp_path, monkeypatch):
    for name in ("DEMO_ADMIN_PASSWORD", "DEMO_RESEARCHER_PASSWORD", "DEMO_ANNOTATOR_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"  # the demo mining batch's upload
    return tmp_path


def _snapshot():
    from django.contrib.auth.models import User

    from benchmarks.models import Dataset, Generation, Generator, Procedure
    from judging.models import JudgeRun, Judgment

    judging = [
        list(JudgeRun.objects.order_by("id").values_list("id", "judge__name", "n_total")),
        list(
            Judgment.objects.order_by("id").values_list(
                "id", "source_example_id", "has_failure", "critical_failures"
            )
        ),
    ]
    return (
        judging,
        list(Dataset.objects.values_list("id", "name", "version")),
        list(
            Procedure.objects.order_by("id").values_list(
                "id", "source_example_id", "goal", "steps", "resources", "topic__slug"
            )
        ),
        list(Generator.objects.order_by("id").values_list("id", "name")),
        list(
            Generation.objects.order_by("id").values_list(
                "id", "procedure__source_example_id", "generator__name", "predicted_steps"
            )
        ),
        list(User.objects.order_by("id").values_list("id", "username", "password", "is_superuser")),
    )


@pytest.mark.django_db
def test_load_demo_is_idempotent(var_dir):
    from django.contrib.auth.models import User

    from benchmarks.models import Generation, Procedure
    from core.roles import is_researcher, user_roles

    out = io.StringIO()
    call_command("load_demo", stdout=out)
    first = _snapshot()
    assert Procedure.objects.filter(dataset__name="how2bench-demo").count() == 19
    assert Generation.objects.filter(procedure__dataset__name="how2bench-demo").count() == 11
    researcher, annotator = (
        User.objects.get(username="researcher"),
        User.objects.get(username="annotator"),
    )
    assert is_researcher(researcher) and not is_researcher(annotator)
    assert user_roles(annotator) == {"annotator"}
    assert annotator.check_password((var_dir / "demo-annotator-password").read_text().strip())

    from judging.models import Judgment

    published = Judgment.objects.filter(judge__name="paper-published")
    assert published.count() == len(PUBLISHED)
    assert published.filter(has_failure=True).count() == sum(PUBLISHED.values())

    from annotation.models import Study

    study = Study.objects.get(name="Demo study: the paper's examples")
    assert study.status == "open" and study.items.count() == 4
    assert f"/study/s/{study.slug}/" in out.getvalue()

    call_command("load_demo", stdout=io.StringIO())
    assert _snapshot() == first
    assert Study.objects.filter(name=study.name).count() == 1


@pytest.mark.django_db
def test_demo_annotator_can_enter_the_demo_study(var_dir, client):
    from annotation.models import Participant, Study

    call_command("load_demo", stdout=io.StringIO())
    study = Study.objects.get(name="Demo study: the paper's examples")
    response = client.get(
        f"/study/s/{study.slug}/", {"PROLIFIC_PID": "demo1", "STUDY_ID": "demo", "SESSION_ID": "s1"}
    )
    assert response.status_code == 302
    assert not Participant.objects.filter(prolific_pid="demo1").exists()  # created on consent
    client.post(f"/study/s/{study.slug}/consent/", {"consent": "agree"})
    assert Participant.objects.filter(study=study, prolific_pid="demo1").exists()


@pytest.mark.django_db
def test_ensure_demo_admin_creates_a_working_login(var_dir, client):
    from django.contrib.auth.models import User

    from core.roles import is_admin

    out = io.StringIO()
    call_command("ensure_demo_admin", "--url", "http://127.0.0.1:8123/", stdout=out)
    secret = var_dir / "demo-admin-password"
    password = secret.read_text().strip()
    assert len(password) >= 12
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    printed = out.getvalue()
    assert (
        "http://127.0.0.1:8123/accounts/login/" in printed
        and password in printed
        and "admin" in printed
    )

    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and is_admin(admin)
    assert admin.groups.filter(name="admin").exists()

    client.get("/accounts/login/")  # real login form, CSRF enforced
    client.handler.enforce_csrf_checks = True
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/accounts/login/",
        {"username": "admin", "password": password, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(admin.pk)

    out2 = io.StringIO()
    call_command("ensure_demo_admin", stdout=out2)  # kept, same password
    assert "kept" in out2.getvalue() and secret.read_text().strip() == password
    assert User.objects.get(username="admin").password == admin.password


@pytest.mark.django_db
def test_ensure_demo_admin_takes_the_password_from_the_environment(var_dir, monkeypatch):
    from django.contrib.auth.models import User

    call_command("ensure_demo_admin", stdout=io.StringIO())
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "env-Chosen-pass-42")
    out = io.StringIO()
    call_command("ensure_demo_admin", stdout=out)
    assert User.objects.get(username="admin").check_password("env-Chosen-pass-42")
    assert "env-Chosen-pass-42" in out.getvalue() and "DEMO_ADMIN_PASSWORD" in out.getvalue()


@pytest.mark.django_db
def test_demo_users_get_their_roles(var_dir):
    from core.roles import is_admin, is_researcher
    from demo.management.commands.load_demo import demo_user_ensure

    researcher, created = demo_user_ensure(username="researcher")
    # researchers get the console (read-only there by their group's permissions)
    assert (
        created and is_researcher(researcher) and not is_admin(researcher) and researcher.is_staff
    )
    annotator, _ = demo_user_ensure(username="annotator")
    assert not is_researcher(annotator) and not annotator.is_staff
    again, created = demo_user_ensure(username="annotator")
    assert not created and again.password == annotator.password
