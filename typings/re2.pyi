"""Types for the part of google-re2 this project uses (the package ships no type information).

Kept to what we call: `compile` with `Options`, a pattern's `search`/`sub`, a match's groups.
"""

from collections.abc import Callable

class error(Exception): ...

class Options:
    max_mem: int
    log_errors: bool
    longest_match: bool
    case_sensitive: bool
    def __init__(self) -> None: ...

class _Match:
    def __getitem__(self, group: int | str) -> str | None: ...
    def group(self, group: int | str = 0, /) -> str | None: ...

class _Regexp:
    def search(
        self, text: str, pos: int | None = None, endpos: int | None = None
    ) -> _Match | None: ...
    def sub(self, repl: str | Callable[[_Match], str], text: str, count: int = 0) -> str: ...

def compile(pattern: str | _Regexp, options: Options | None = None) -> _Regexp: ...
