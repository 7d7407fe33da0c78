"""Schemathesis against the live service's OpenAPI schema: generated requests (valid and not) to every
endpoint, with an agent token and with the operator's, never get a 500. Few examples per endpoint, to stay
fast. (Operations are walked by hand: schemathesis' lazy pytest fixture does not load under this pytest.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from serve_helpers import AGENT_A, OPERATOR, Server, running


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("schema"), "--no-access-log") as server:
        server.client().create("territory-debug-v0", seed=1)
        yield server


@pytest.mark.parametrize("token", [AGENT_A, OPERATOR], ids=["agent", "operator"])
def test_no_generated_request_gets_a_500(live: Server, token: str) -> None:
    schema = schemathesis.openapi.from_url(live.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def call(case: schemathesis.Case) -> None:
            case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=[not_a_server_error])

        call()
