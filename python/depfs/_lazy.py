"""Names of a package imported on first use (PEP 562), so that starting the CLI does not
import numpy and every module before a command needs them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def attach(
    package: str, names: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose attribute `name` is imported
    from the module `names[name]` (relative to the package; a submodule named `name`
    is the submodule itself) on first access."""
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where, package)
        value = module if where == "." + name else getattr(module, name)
        namespace[name] = value  # later lookups do not come back here
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(names))

    return getattr_, dir_
