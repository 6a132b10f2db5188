"""The stability indices, one :class:`Index` record each in one registry (:data:`INDICES`):
its range, its pairwise similarity (or how it is computed without one), how it
converts to features shared, the subset sizes it is defined on, and the summary's words
for it. Everything else reads an index's record, never its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ensstab_dask.checks import check_choice
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.indices.nogueira import check_mean_size, nogueira_parts
from ensstab_dask.wording import param

__all__ = [
    "Index",
    "INDICES",
    "PAIRWISE_INDICES",
    "get_index",
    "check_sizes",
    "index_range",
    "check_index_defined",
    "clip_to_index",
    "shared_features",
    "index_of_shared",
]


@dataclass(frozen=True)
class Index:
    """One stability index: everything the package does differently for it.

    Attributes
    ----------
    name : str
        What ``index=`` (and the CLI's ``--index``) takes.
    range : (float, float)
        The values it can take: an interval of it is clipped to them.
    similarity : callable or None
        ``similarity(inter, size, n_feature)``: the (U, U) pairwise similarities from the
        float64 matrix of intersection sizes ``inter`` and the subset sizes ``size`` (its
        diagonal); the index is their mean over pairs. None: the index is not a mean over
        pairs, and ``of_membership`` computes it.
    of_membership : callable or None
        ``of_membership(z)``: the index of a float 0/1 membership matrix (runs x features),
        for an index without a pairwise form.
    shared, of_shared : callable
        ``shared(value, k, n)``: how many of their ``k`` features two selections of ``k``
        (of ``n``) share when their similarity is ``value`` (increasing in ``value``);
        ``of_shared(shared, k, n)``: the other way (float64 arrays, floats).
    check_sizes : callable
        ``check_sizes(sizes, n_feature, name)`` raises :class:`InvalidParameterError` for
        subset sizes the index is undefined on.
    corrected_for_chance : bool
        0 at chance through a division by ``k (n - k)``, so undefined when every subset
        is all the features.
    of_k : str
        The summary's words for the index as a function of ``k``, the features two
        selections share: a format string with ``{two_k}``, ``{k}``, ``{n}``,
        ``{k_squared}`` and ``{n_minus_k}`` (of ``n_target`` = k, ``n_feature`` = n).
    """

    name: str
    range: tuple[float, float]
    similarity: Callable[[np.ndarray, np.ndarray, int], np.ndarray] | None
    of_membership: Callable[[np.ndarray], float] | None
    shared: Callable[[np.ndarray, float, float], np.ndarray]
    of_shared: Callable[[np.ndarray, float, float], np.ndarray]
    check_sizes: Callable[[np.ndarray, int, str], None]
    corrected_for_chance: bool
    of_k: str

    def __post_init__(self) -> None:
        if (self.similarity is None) == (self.of_membership is None):
            raise ValueError(param("index") + f" {self.name!r} needs exactly one of similarity and of_membership")


def _jaccard(inter: np.ndarray, size: np.ndarray, n_feature: int) -> np.ndarray:
    a, b = size[:, None], size[None, :]
    return inter / (a + b - inter)


def _dice(inter: np.ndarray, size: np.ndarray, n_feature: int) -> np.ndarray:
    a, b = size[:, None], size[None, :]
    return 2.0 * inter / (a + b)


def _kuncheva(inter: np.ndarray, size: np.ndarray, n_feature: int) -> np.ndarray:
    k = size[0]  # every subset has it (_equal_proper_sizes)
    return (inter * n_feature - k * k) / (k * (n_feature - k))


def _nogueira(z: np.ndarray) -> float:
    return nogueira_parts(z)[0]


def _jaccard_shared(v: np.ndarray, k: float, n: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * k * v / (1.0 + v)


def _jaccard_of_shared(s: np.ndarray, k: float, n: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return s / (2.0 * k - s)


def _dice_shared(v: np.ndarray, k: float, n: float) -> np.ndarray:
    return k * v


def _dice_of_shared(s: np.ndarray, k: float, n: float) -> np.ndarray:
    return s / k


# Nogueira's index equals the mean pairwise Kuncheva index when every subset has k
# features (Nogueira et al. 2018), so both convert to shared features the same way.
def _kuncheva_shared(v: np.ndarray, k: float, n: float) -> np.ndarray:
    return (v * k * (n - k) + k * k) / n


def _kuncheva_of_shared(s: np.ndarray, k: float, n: float) -> np.ndarray:
    return (s * n - k * k) / (k * (n - k))


def _nonempty_sizes(sizes: np.ndarray, n_feature: int, name: str) -> None:
    if (sizes == 0).any():
        raise InvalidParameterError(f"subsets must not be empty for index {name!r}")


def _equal_proper_sizes(sizes: np.ndarray, n_feature: int, name: str) -> None:
    if (sizes != sizes[0]).any():
        raise InvalidParameterError(f"subsets must all have the same size for index {name!r}")
    if sizes[0] in (0, n_feature):
        raise InvalidParameterError(
            param("index") + f" {name!r} needs 0 < subset size < n_feature={n_feature}; got {sizes[0]}"
        )


_KUNCHEVA_OF_K = "(k x {n} - {k_squared}) / ({k} x {n_minus_k})"


#: The stability indices (``index=``) by name, in the order the choices are listed.
#: Kuncheva's and Nogueira's are 0 at chance and go below it.
INDICES: dict[str, Index] = {
    index.name: index
    for index in (
        Index(
            name="jaccard",
            range=(0.0, 1.0),
            similarity=_jaccard,
            of_membership=None,
            shared=_jaccard_shared,
            of_shared=_jaccard_of_shared,
            check_sizes=_nonempty_sizes,
            corrected_for_chance=False,
            of_k="a Jaccard index of k / ({two_k} - k)",
        ),
        Index(
            name="dice",
            range=(0.0, 1.0),
            similarity=_dice,
            of_membership=None,
            shared=_dice_shared,
            of_shared=_dice_of_shared,
            check_sizes=_nonempty_sizes,
            corrected_for_chance=False,
            of_k="a Dice index of k / {k}",
        ),
        Index(
            name="kuncheva",
            range=(-1.0, 1.0),
            similarity=_kuncheva,
            of_membership=None,
            shared=_kuncheva_shared,
            of_shared=_kuncheva_of_shared,
            check_sizes=_equal_proper_sizes,
            corrected_for_chance=True,
            of_k="a Kuncheva index of " + _KUNCHEVA_OF_K,
        ),
        Index(
            name="nogueira",
            range=(-1.0, 1.0),
            similarity=None,
            of_membership=_nogueira,
            shared=_kuncheva_shared,
            of_shared=_kuncheva_of_shared,
            check_sizes=check_mean_size,
            corrected_for_chance=True,
            of_k="a Nogueira index of " + _KUNCHEVA_OF_K + " (Kuncheva's, for equal sizes)",
        ),
    )
}


class _PairwiseIndices(Mapping[str, Index]):
    """The indices of :data:`INDICES` that are a mean over pairs of subsets: a live view,
    so an index registered later is in it too."""

    def __getitem__(self, name: str) -> Index:
        index = INDICES[name]
        if index.similarity is None:
            raise KeyError(name)
        return index

    def __iter__(self) -> Iterator[str]:
        return (name for name, index in INDICES.items() if index.similarity is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"PAIRWISE_INDICES({', '.join(self)})"


#: The indices with a pairwise similarity (Nogueira's has none), by name.
PAIRWISE_INDICES: Mapping[str, Index] = _PairwiseIndices()


def get_index(name: str) -> Index:
    """The record of index ``name``, refusing a name that is none."""
    return INDICES[check_choice(name, "index", INDICES)]


def check_sizes(rows: list[np.ndarray], n_feature: int, index: str) -> None:
    """Refuse subsets whose sizes ``index`` is undefined on (:attr:`Index.check_sizes`)."""
    INDICES[index].check_sizes(np.array([r.size for r in rows]), n_feature, index)


def index_range(index: str | None = None) -> tuple[float, float]:
    """The values ``index`` can take; None: the values some index can take."""
    if index is None:
        return min(i.range[0] for i in INDICES.values()), max(i.range[1] for i in INDICES.values())
    return get_index(index).range


def check_index_defined(index: str, n_feature: int, n_target: int) -> str:
    """``index``, refused (with the reason) where it is undefined for subsets of
    ``n_target`` of ``n_feature`` features: an index corrected for chance divides by
    ``k (n - k)``, which is 0 when every subset is all the features."""
    if get_index(index).corrected_for_chance and n_target == n_feature:
        raise InvalidParameterError(
            param("index") + f" {index!r} is undefined when n_target == n_feature (every subset is all features)"
        )
    return index


def clip_to_index(values, index: str) -> np.ndarray:
    """``values`` within the range ``index`` can take (a bootstrap can step outside it)."""
    lo, hi = index_range(index)
    return np.clip(np.asarray(values, dtype=float), lo, hi)


def shared_features(value, index: str, n_feature: int, n_target: int, *, clip: bool = True):
    """How many of their ``n_target`` features two selections share when their similarity
    is ``value``: the index's pairwise similarity solved for the intersection, for equal
    sizes (:attr:`Index.shared`).

    Each mapping is increasing: an interval of the index maps to an interval of the count.
    ``clip=False`` keeps the formula's value beyond ``[0, n_target]`` (a picture's axis
    scale, which must be defined on the whole axis).
    """
    v, k, n = np.asarray(value, dtype=np.float64), float(n_target), float(n_feature)
    out = get_index(index).shared(v, k, n)
    # An interval clipped to the index's range can reach below what two selections of k
    # features can score (Kuncheva's floor is -k/(n-k)): no fewer than 0 shared, no more than k.
    return np.clip(out, 0.0, k) if clip else out


def index_of_shared(shared, index: str, n_feature: int, n_target: int):
    """The similarity of two selections of ``n_target`` features that share ``shared`` of
    them: :func:`shared_features` the other way (a picture's second axis, say).

    Examples
    --------
    >>> from ensstab_dask.indices import index_of_shared, shared_features
    >>> float(index_of_shared(10, "jaccard", 2000, 20))  # 10 of 20 shared: 10 / 30
    0.3333333333333333
    >>> float(shared_features(index_of_shared(7.0, "kuncheva", 2000, 20), "kuncheva", 2000, 20))
    7.0
    """
    s, k, n = np.asarray(shared, dtype=np.float64), float(n_target), float(n_feature)
    return get_index(index).of_shared(s, k, n)
