import pytest

from tests.validation.disagreements.scenario import disagreement_scenario


@pytest.fixture
def scenario(db):
    return disagreement_scenario()


@pytest.fixture
def researcher_client(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client
