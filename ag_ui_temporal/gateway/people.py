"""The people the gateway names: the directory file (`DIRECTORY_FILE`), read again when it
changes, for display names in what people read and for the groups a decision link's
principal holds (a link carries no credentials of its own besides its signature)."""

from __future__ import annotations

import logging
from pathlib import Path

from ag_ui_temporal.notify.directory import Directory, Person
from ag_ui_temporal.settings import Settings

log = logging.getLogger(__name__)


class _DirectoryFile:
    """The directory, read again when the file changes (mtime or size)."""

    def __init__(self) -> None:
        self.read: tuple[Path, int, int] | None = None
        self.directory = Directory()

    def of(self, path: Path | None) -> Directory:
        if path is None:
            return Directory()
        try:
            stat = path.stat()
            stamp = (path, stat.st_mtime_ns, stat.st_size)
            if self.read != stamp:
                self.directory, self.read = Directory.load(path), stamp
        except (OSError, ValueError) as err:  # the gateway still answers, naming nobody
            log.warning("DIRECTORY_FILE unusable, nobody named: %s", err)
            return Directory()
        return self.directory


_file = _DirectoryFile()


def display_names(settings: Settings, principals: set[str]) -> dict[str, str]:
    """Display names of `principals`; a missing or broken file names nobody."""
    names = _file.of(settings.directory_file).names()
    return {p: names[p] for p in sorted(principals) if p in names}


def person(settings: Settings, principal: str) -> Person:
    """What the directory says of `principal` (nothing but the name if it is not there)."""
    return _file.of(settings.directory_file).person(principal)
