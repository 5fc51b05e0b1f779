"""The embedded server's helpers: a Temporal address where nothing answers is reported in
words; on a `.data/` made before a search attribute existed, the missing ones are
registered; `DEV_SERVER_ADDRESS` is a HOST:PORT or refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.cli.dev_server import register_search_attributes, wait_for_temporal
from ag_ui_temporal.settings import Settings, host_port
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES
from tests.conftest import bundled_binary, free_port


async def test_an_absent_temporal_address_is_reported_in_words_at_once():
    """Someone else's server that refuses the connection is not starting up: no wait (the
    `within` here would fail the test if it were waited out)."""
    settings = Settings(temporal_address=f"127.0.0.1:{free_port()}")
    with pytest.raises(SystemExit) as stopped:
        await wait_for_temporal(settings, within=3600)
    assert str(stopped.value) == (
        f"ag-ui-temporal dev: no Temporal server answers at {settings.temporal_address}"
        " (TEMPORAL_ADDRESS): nothing listens there (connection refused)."
        " Start it, or unset TEMPORAL_ADDRESS for `dev` to run its own."
    )


async def test_missing_search_attributes_are_registered():
    # a server whose database knows none of them (the dev server registers its
    # --search-attribute flags only when it creates the database)
    async with await WorkflowEnvironment.start_local(
        dev_server_existing_path=bundled_binary("temporal"),
        dev_server_extra_args=["--log-level", "error"],
    ) as env:
        address = env.client.service_client.config.target_host
        request = ListSearchAttributesRequest(namespace="default")

        async def registered() -> set[str]:
            listed = await env.client.operator_service.list_search_attributes(request)
            return {key.name for key in SEARCH_ATTRIBUTES} & set(listed.custom_attributes)

        assert await registered() == set()
        await register_search_attributes(Settings(temporal_address=address))
        assert await registered() == {key.name for key in SEARCH_ATTRIBUTES}
        await register_search_attributes(Settings(temporal_address=address))  # idempotent


@pytest.mark.parametrize(
    ("address", "parts"),
    [("127.0.0.1:7233", ("127.0.0.1", 7233)), ("[::1]:17233", ("::1", 17233)),
     ("localhost:1", ("localhost", 1))],
)  # fmt: skip
def test_dev_server_address_is_host_and_port(address: str, parts: tuple[str, int]):
    assert host_port(address) == parts
    assert Settings(dev_server_address=address).dev_server_address == address


@pytest.mark.parametrize("address", ["7233", ":7233", "::1:7233", "host:0", "host:65536", "h:x"])
def test_a_dev_server_address_without_host_and_port_is_refused(address: str):
    with pytest.raises(ValidationError, match="is not HOST:PORT"):
        Settings(dev_server_address=address)
