"""`ag-ui-temporal dev` on a `.data/` made before a search attribute existed."""

from __future__ import annotations

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.cli.dev import register_search_attributes
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES
from tests.conftest import bundled_binary


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
