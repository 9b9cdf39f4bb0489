"""Type stubs of the Rust extension module depfs._core.

Every pyclass is final (pyo3 classes cannot be subclassed); keep each stub marked @final.
"""

from typing import final

__version__: str

@final
class Treebank:
    def __len__(self) -> int: ...

# evaluation, statistics, perturbation (rust/depfs-py/src/eval.rs)
def evaluate_counts(
    gold: Treebank, system: Treebank, full_labels: bool = False
) -> dict[str, int]: ...
def treebank_stats_counts(treebank: Treebank) -> dict[str, object]: ...
def perturb_treebank(
    treebank: Treebank, head_rate: float, label_rate: float, seed: int
) -> Treebank: ...
