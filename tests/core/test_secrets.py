"""Secrets: an LLM configuration names its key variable, and only a variable whose name the
allow-list accepts and the app does not read itself; optional allow-list of LLM hosts. The same
rule (core.secrets) in the judge console/CLI (Judge.full_clean), mining (form, service, CLI),
judging bench configs and the OpenAI-compatible backend itself."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from benchmarks.llm.base import LLMRequest
from benchmarks.llm.registry import build_backend
from core.secrets import api_key_env_error, base_url_error
from judging.models import Judge
from judging.services import judges as judge_services
from mining.forms import BatchForm
from tests.support.llm_fixtures import llm_server  # noqa: F401

FORBIDDEN = [
    "SECRET_KEY",
    "DJANGO_SECRET_KEY",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "CACHE_URL",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "EMAIL_HOST_PASSWORD",
    "PATH",
    "HOME",
    "sk-live-123",
]
ALLOWED = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "MY_LAB_API_KEY"]


@pytest.mark.parametrize("name", FORBIDDEN)
def test_each_forbidden_name_is_refused(name):
    assert api_key_env_error(name)


@pytest.mark.parametrize("name", [*ALLOWED, ""])
def test_allowed_names_pass(name):
    assert api_key_env_error(name) is None


def test_patterns_and_forbidden_names_are_settings(settings):
    settings.LLM_API_KEY_ENV_PATTERNS = ["LAB_*"]
    assert api_key_env_error("LAB_SECRET") is None
    assert "LLM_API_KEY_ENV_PATTERNS" in api_key_env_error("OPENAI_API_KEY")
    settings.LLM_API_KEY_ENV_FORBIDDEN = ["LAB_SECRET"]
    assert "this server reads itself" in api_key_env_error("LAB_SECRET")


def test_llm_host_allow_list(settings):
    assert base_url_error("http://anywhere.example:9/v1") is None  # no list: any host
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1", "*.example.org"]
    assert base_url_error("http://127.0.0.1:8001/v1") is None
    assert base_url_error("https://llm.example.org/v1") is None
    assert "not in LLM_ALLOWED_HOSTS" in base_url_error("https://evil.example.com/v1")
    assert "not in LLM_ALLOWED_HOSTS" in base_url_error("")  # the default: api.openai.com
    assert "http:// or https://" in base_url_error("file:///etc/passwd")


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL"])
def test_backend_refuses_before_any_request(llm_server, monkeypatch, name):  # noqa: F811
    monkeypatch.setenv(name, "the-server-secret")
    config = {"backend": "openai", "base_url": llm_server.base_url, "model": "m"}
    with pytest.raises(ValueError, match=f"api_key_env: {name}"):
        build_backend({**config, "api_key_env": name})
    monkeypatch.setenv("H2R_CHECK_API_KEY", "sk-ok")
    backend = build_backend({**config, "api_key_env": "H2R_CHECK_API_KEY"})
    backend.complete_many([LLMRequest(messages=[{"role": "user", "content": "hi"}])])
    # only the allowed variable's value ever left, as the Bearer token
    assert [r.headers.get("authorization") for r in llm_server.requests] == ["Bearer sk-ok"]


def test_backend_refuses_a_host_off_the_list(llm_server, settings):  # noqa: F811
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org"]
    with pytest.raises(
        ValueError, match=r"base_url: host 127\.0\.0\.1 is not in LLM_ALLOWED_HOSTS"
    ):
        build_backend({"backend": "openai", "base_url": llm_server.base_url, "model": "m"})


@pytest.mark.django_db
@pytest.mark.parametrize("name", FORBIDDEN)
def test_judge_console_and_cli_refuse(name):
    with pytest.raises(ValidationError) as info:
        judge_services.judge_create(
            name="j",
            backend="openai",
            base_url="http://127.0.0.1:9/v1",
            model="m",
            api_key_env=name,
        )
    assert "api_key_env" in info.value.message_dict
    assert not Judge.objects.exists()


@pytest.mark.django_db
def test_judge_admin_form_names_the_field(admin_client):
    r = admin_client.post(
        "/admin/judging/judge/add/",
        {"name": "j", "backend": "openai", "model": "m", "api_key_env": "SECRET_KEY"},
    )
    assert r.status_code == 200  # the form again, with the error
    assert "a variable this server reads itself" in r.content.decode()
    assert not Judge.objects.exists()


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL"])
def test_mining_form_refuses(name):
    form = BatchForm(data={"model": "m", "api_key_env": name, "stages": ["1"], "min_steps": 5})
    assert not form.is_valid()
    assert "this server reads itself" in form.errors["api_key_env"][0]


@pytest.mark.django_db
def test_mining_cli_refuses(tmp_path):
    doc = tmp_path / "d.jsonl"
    doc.write_text('{"id": "d1", "text": "Boil water. Add pasta.", "url": "u", "topic": "t"}\n')
    with pytest.raises(CommandError, match="DATABASE_URL is a variable this server reads"):
        call_command("mine", str(doc), "--api-key-env", "DATABASE_URL", "--model", "m")
