"""`ag-ui-temporal migrate`: the store's schema at the newest migration, the init step that
docker-compose and Kubernetes run before the worker and the gateway (`dev` runs it itself).
The database is `DATABASE_URL`, else SQLite under `DATA_DIR`."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from ag_ui_temporal.settings import Settings

log = logging.getLogger("ag-ui-temporal")


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "migrate", help="create or upgrade the store's schema (DATABASE_URL, else SQLite)"
    )
    parser.add_argument(
        "--create-database",
        action="store_true",
        help="first create the PostgreSQL database DATABASE_URL names, if it does not exist",
    )


async def run(settings: Settings, args: argparse.Namespace) -> None:
    from ag_ui_temporal.cli.reasons import store_errors
    from ag_ui_temporal.store.migrate import migrate

    with store_errors(settings):
        await migrate(settings.store_url, create=args.create_database)
    log.info("the store's schema is at the newest migration")
