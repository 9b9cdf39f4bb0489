"""Type stubs of the Rust extension module depfs._core.

Every pyclass is final (pyo3 classes cannot be subclassed); keep each stub marked @final.
"""

from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__version__: str

@final
class Treebank:
    def __len__(self) -> int: ...

# --- decoders (depfs.decode) ---
def decode_cle(scores: Any, single_root: bool = True) -> NDArray[np.int64]: ...
def decode_eisner(scores: Any, single_root: bool = True) -> NDArray[np.int64]: ...
def decode_eisner2(arc: Any, sib: Any, single_root: bool = True) -> NDArray[np.int64]: ...
def decode_eisner_kbest(
    scores: Any, k: int, single_root: bool = True
) -> list[tuple[NDArray[np.int64], float]]: ...
def decode_tree_score(scores: Any, heads: list[int]) -> float: ...
def decode_cle_batch(
    matrices: list[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]: ...
def decode_eisner_batch(
    matrices: list[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]: ...
