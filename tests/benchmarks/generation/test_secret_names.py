"""Key-variable names for generation runs: the console and the CLI refuse a key variable the server
reads itself (core.secrets), before anything is created."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import GenerationRun


@pytest.mark.usefixtures("small_dataset")
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY"])
def test_run_generation_cli_refuses_server_variables(llm_server, name):
    with pytest.raises(CommandError, match=f"api_key_env: {name}"):
        call_command(
            "run_generation",
            "--generator",
            "g",
            "--dataset",
            "gen-test",
            "--model",
            "m",
            "--base-url",
            llm_server.base_url,
            "--api-key-env",
            name,
            "--inline",
        )
    assert not GenerationRun.objects.exists() and not llm_server.requests
