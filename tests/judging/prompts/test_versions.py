"""Judge prompts as versions: the shipped H.3 text is version 1 and every judge of it keeps the
judge id it had before prompts were versioned (ids computed by the code before the change, for
four kinds of judge); a new version is numbered, checked, never doubled; a judge of another
version hashes and sends that version's text."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import prompting
from judging.models import Judge, JudgeRun, PromptVersion
from judging.presets import how2judge_fields
from judging.services import runs as services
from judging.services.judges import judge_create
from judging.services.prompt_versions import prompt_version_create, prompt_version_for_text
from tests.judging.factories import make_data, make_judge
from tests.judging.support import work_chunk

pytestmark = pytest.mark.django_db

H3 = prompting.load_template("judge_h3")

# judge_id of these judges as the code computed it before prompt versions (commit f799a51)
IDS_BEFORE = {
    "offline": "d0ec360935522f6a40d34528d001a937210ce544c5ad7c095b9223b2b5baaa7b",
    "server": "e17d5a7c3e318959a2a922da4e4a74505853a8651458798fe925754fc570566b",
    "how2judge": "d8615000505759faaf9fdc6fa468695176a9e6d3aa303592fb850023bb89dae6",
    "imported": "e3cd2d82203df8a313cc5ea11b42560894c9b578f3a2617e121b9b365fdf8b18",
}
CASES = {
    "offline": {"name": "judge", "model": "teacher-model", "decoding": {"temperature": 1.0}},
    "server": {
        "name": "j2",
        "backend": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1234/v1",
    },
    "how2judge": how2judge_fields("/models/how2judge"),
    "imported": {"name": "imp", "backend": "imported", "model": "x", "structured_output": False},
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_judges_of_the_shipped_h3_text_keep_their_ids_and_name_version_1(kind):
    fields = dict(CASES[kind])
    judge = judge_create(name=fields.pop("name"), **fields)
    assert judge.judge_id == IDS_BEFORE[kind]
    v1 = PromptVersion.objects.get(name="judge_h3", number=1)
    assert judge.prompt_version == v1 and v1.text == H3
    assert v1.sha256 == prompting.text_sha256(H3)
    judge.save()  # saving again changes nothing
    assert Judge.objects.get(pk=judge.pk).judge_id == IDS_BEFORE[kind]


def test_a_new_version_is_numbered_checked_and_never_doubled(make_user):
    ada = make_user("ada", role="admin")
    text = H3.replace("# Important Guidelines", "# Important Guidelines (revised)")
    v2 = prompt_version_create(text=text, note="clearer heading", author=ada)
    assert (v2.name, v2.number, v2.author, v2.note) == ("judge_h3", 2, ada, "clearer heading")
    assert v2.previous().number == 1 and v2.previous().previous() is None
    diff = v2.diff()
    assert (diff.n_added, diff.n_removed) == (1, 1)
    assert "-# Important Guidelines" in diff.unified()
    assert "+# Important Guidelines (revised)" in diff.unified()
    # the same text again: refused, naming the version that has it
    with pytest.raises(ValidationError) as info:
        prompt_version_create(text=text)
    assert info.value.message_dict["text"] == ["this text is already judge_h3 v2 (nothing changed)"]
    with pytest.raises(ValidationError) as info:
        prompt_version_create(text=H3)
    assert "already judge_h3 v1" in info.value.message_dict["text"][0]
    # bench's path: the same text is found, a new one numbered
    assert prompt_version_for_text(text=text) == (v2, False)
    v3, created = prompt_version_for_text(text=text + "\nMore.")
    assert created and v3.number == 3
    # another prompt's numbers start at 1
    other = prompt_version_create(name="my-prompt", text="Judge {steps}")
    assert other.number == 1 and str(other) == "my-prompt v1"


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"text": "Judge {goal} {candidate}"}, "text", "unknown placeholder(s) {candidate}"),
        ({"text": "   \n"}, "text", "the prompt is empty"),
        ({"text": "x" * 100_001}, "text", "at most 100,000"),
        ({"text": "Judge\x00 {steps}"}, "text", "U+0000 NUL"),
        ({"text": "Judge {steps}", "note": "n" * 501}, "note", "at most 500 characters"),
        ({"text": "Judge {steps}", "name": "Bad Name"}, "name", "lowercase letters"),
    ],
)
def test_refusals_name_the_field_and_store_nothing(fields, field, message):
    with pytest.raises(ValidationError) as info:
        prompt_version_create(**fields)
    assert message in " ".join(info.value.message_dict[field])
    assert not PromptVersion.objects.filter(number__gt=1).exists()


@pytest.mark.django_db(transaction=True)  # the run's replies are stored by another thread
def test_a_judge_of_another_version_hashes_and_sends_its_text(llm_server):
    llm_server.responder = lambda req: '{"reasoning": "ok", "critical_failures": []}'
    text = "REVISED JUDGE. Goal: {goal}\nL1:\n{reference_steps}\nL2:\n{steps}"
    v2 = prompt_version_create(text=text)  # an emptied database: the shipped text stays 1
    assert v2.number == 2 and PromptVersion.objects.get(number=1).text == H3
    h3_judge = make_judge(name="h3", base_url=llm_server.base_url)
    judge = make_judge(name="v2", base_url=llm_server.base_url, prompt_version=v2)
    assert judge.prompt_template == "judge_h3" and judge.prompt_text() == text
    assert judge.family_config() == h3_judge.family_config()  # one family, two versions
    assert judge.judge_id != h3_judge.judge_id
    assert judge.judge_id == prompting.canonical_judge_id(
        config=judge.identity_config(), prompt_text=text
    )
    data = make_data(n=2)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert work_chunk(run).status == "done"
    assert JudgeRun.objects.get(pk=run.pk).n_done == 2
    prompts = [r.prompt_text for r in llm_server.requests]
    assert len(prompts) == 2 and all(
        p.startswith("REVISED JUDGE. Goal: Goal number") for p in prompts
    )
    assert all(p.endswith(prompting.JSON_REMINDER) for p in prompts)


def test_a_version_in_use_cannot_be_deleted():
    from django.db.models import ProtectedError

    judge = make_judge(name="h3")
    with pytest.raises(ProtectedError):
        judge.prompt_version.delete()
