"""Type stubs of the Rust extension module depfs._core.

Every pyclass is final (pyo3 classes cannot be subclassed); keep each stub marked @final.
"""

from typing import final

__version__: str

@final
class Treebank:
    def __len__(self) -> int: ...
