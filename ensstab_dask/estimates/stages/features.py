"""Which features: how often a real ensemble keeps each one, from the copies a model already ran.

A model's real ensemble copies (``G`` copies of ``B`` weak selectors, each copy on its
own random half of the samples, its weak selectors bootstrap samples of that half) are
``G`` independent reruns of an ensemble study. At each measured size ``m`` (1, the
sizes of ``m_ensemble`` up to ``B``, and ``B``), each copy's ensemble of ``m`` of its
weak selectors keeps ``n_target`` features
(:func:`~ensstab_dask.aggregation.copy_ensembles`, one draw of members per copy); a
feature's *selection frequency* is the fraction of the ``G`` copies whose ensemble keeps
it. Given the data, the copies are independent draws of one random procedure, so a
feature's count is binomial: its interval is Clopper and Pearson's. The *mean rank* is
the consensus over every real run of the copies. No real run is added.

:func:`false_stable_bound` is the bound on the expected number of features of no signal
that reach a frequency threshold (docs/method.md section 17): Meinshausen and
Buhlmann's, which applies to independent random halves (complementary pairs, which Shah
and Samworth's bound needs, are not how the copies are drawn), plus the chance that ``G``
copies put a feature of lower selection probability above the threshold.

Time and memory are O(features x sizes) besides the copies themselves; a problem whose
feature table would not fit is refused before any real run
(:func:`check_feature_memory`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from ensstab_dask.aggregation import copy_ensembles
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.outputs import atomic_output, json_number
from ensstab_dask.outputs.visible import visible
from ensstab_dask.seeding import SeedLike, Stage, Stream, as_seed_sequence, derive, make_rng
from ensstab_dask.settings import EstimateSettings, mb_cutoff

# pandas is imported where a table is made: it is slow to import.

__all__ = [
    "FREQUENT",
    "feature_order",
    "BOUND_NAME",
    "measured_sizes",
    "feature_names_of",
    "check_feature_memory",
    "copy_features",
    "false_stable_bound",
    "mb_pfer",
    "mb_cutoff",
    "copies_needed",
    "copies_for_pfer",
    "CUTOFF_GRID",
    "with_pfer",
    "cutoff_of",
    "selection_frequencies",
    "feature_table",
    "feature_rows",
    "stable_features",
    "write_feature_table",
    "spreadsheet_safe",
]

#: The frequency the plain answer calls "kept on nearly every rerun".
FREQUENT = 0.9
#: What :func:`false_stable_bound` is, in words.
BOUND_NAME = "Meinshausen and Buhlmann's bound with the copies' binomial error"


def measured_sizes(m_list: Sequence[int], members: int) -> list[int]:
    """The ensemble sizes the copies measure: 1 (the single weak selector), the sizes of
    ``m_list`` up to ``members``, and ``members`` (the largest ensemble a copy holds)."""
    return sorted({1, int(members), *(int(m) for m in m_list if m <= members)})


def feature_names_of(names, n_feature: int) -> np.ndarray:
    """The features' names as strings: ``names`` (one per feature: a file's header, its
    ``var_names`` or ``feature_names``), or scikit-learn's ``x0, x1, ...`` without."""
    if names is None:
        return np.array([f"x{i}" for i in range(n_feature)])
    out = np.asarray(names).astype(str)
    if out.ndim != 1 or len(out) != n_feature:
        raise InvalidParameterError(
            f"feature_names must hold one name per feature of X ({n_feature}); got shape {np.shape(names)}"
        )
    return out


def feature_bytes(n_feature: int, copies: int, members: int, n_sizes: int) -> int:
    """Memory of the feature table's stage: the copies' ranks, one size's chosen members
    and their sums, and the table's columns (counts, frequencies, intervals, names)."""
    return 8 * n_feature * (2 * copies * members + 4 * copies + 8 * n_sizes + 8)


def check_feature_memory(settings: EstimateSettings) -> None:
    """Refuse, before any real run, a feature table that would need more than half this
    machine's memory (a model's copies, or else its self-check's)."""
    import psutil

    design = settings.largest_design or settings.curve_model.check_design()
    if design is None:
        return
    n_sizes = len(measured_sizes(settings.m_list, design[1]))
    need, total = feature_bytes(settings.n_feature, *design, n_sizes), psutil.virtual_memory().total
    if need > total // 2:
        raise InvalidParameterError(
            f"the feature table (n_feature={settings.n_feature}, {design[0]} copies of {design[1]}, {n_sizes} sizes) "
            f"would need about {need / 2**30:.1f} GiB of memory, more than half of this machine's "
            f"{total / 2**30:.1f} GiB: keep fewer features in the data"
        )


def copy_features(settings: EstimateSettings, ranks: np.ndarray | None, names) -> xr.Dataset | None:
    """:func:`selection_frequencies` of an estimate: on its model's copies (``ranks``, None
    when it has none), at :func:`measured_sizes`, from the estimate's stream ``Stage.FEATURES``,
    kept at its :func:`cutoff_of` (:func:`with_pfer` for a ``pfer`` asked for)."""
    if ranks is None:
        return None
    seed = derive(as_seed_sequence(settings.seed), Stream.ESTIMATE, Stage.FEATURES)
    sizes = measured_sizes(settings.m_list, ranks.shape[1])
    features = selection_frequencies(
        ranks,
        settings.n_target,
        sizes,
        aggregate=settings.aggregate,
        seed=seed,
        confidence=settings.confidence,
        names=names,
        cutoff=cutoff_of(settings),
    )
    return with_pfer(features, settings.pfer)


def false_stable_bound(n_target: int, n_feature: int, copies: int, threshold: float = FREQUENT) -> float:
    """The expected number of features of no signal whose frequency over ``copies`` copies
    reaches ``threshold``, at most (docs/method.md section 17); NaN for a threshold of 1/2
    or less, where no bound of this kind holds.

    For any ``t`` in (1/2, ``threshold``]: the features whose selection probability over
    random halves is at least ``t`` number at most ``q^2 / ((2t - 1) p)`` in expectation
    (Meinshausen and Buhlmann 2010, Theorem 1; ``q = n_target``, ``p = n_feature``;
    assuming the selection of the features of no signal is exchangeable and the selector
    no worse than random guessing), and those below ``t`` reach the threshold by the
    binomial chance of ``copies`` copies, at most ``q * max_{pi <= t} P(Bin(G, pi) >= r) / pi``
    in all (their probabilities sum to at most ``q``). The bound is the smallest sum over ``t``.
    It exceeds :func:`mb_pfer` at ``threshold`` for every finite ``copies`` and tends to it
    as ``copies`` grows.
    """
    if threshold <= 0.5:
        return float("nan")
    return float(_bounds(n_target, n_feature, np.array([int(copies)]), threshold)[0])


def _bounds(n_target: int, n_feature: int, copies: np.ndarray, threshold: float) -> np.ndarray:
    """:func:`false_stable_bound` at each of ``copies`` at once (threshold above 1/2), each
    element computed as it would be alone."""
    q, p, G = float(n_target), float(n_feature), copies[:, None]
    r = np.ceil(threshold * G - 1e-9)
    t = np.linspace(0.5, threshold, 201)[1:]
    # The largest binomial term over pi <= t, for every t at once: a running maximum over one
    # grid of (0, threshold] that holds each t.
    pi = np.union1d(t, threshold * np.arange(1, 2001) / 2000.0)
    chance = np.maximum.accumulate(stats.binom.sf(r - 1, G, pi) / pi, axis=1)[:, np.searchsorted(pi, t)]
    return (q * q / ((2.0 * t - 1.0) * p) + q * chance).min(axis=1)


def mb_pfer(n_target: int, n_feature: int, cutoff: float) -> float:
    """Meinshausen and Buhlmann's bound on the expected number of features of no signal
    whose selection probability reaches ``cutoff``: ``q^2 / ((2 cutoff - 1) p)``, what R's
    stabs reports as the PFER (``q = n_target``, ``p = n_feature``); NaN for a cutoff of 1/2
    or less.

    It assumes exact selection probabilities, that is infinitely many copies; the list of
    stable features obeys :func:`false_stable_bound`, which adds the error of finitely many.

    Examples
    --------
    >>> mb_pfer(20, 2000, 0.9)
    0.25
    """
    if cutoff <= 0.5:
        return float("nan")
    return n_target**2 / ((2.0 * cutoff - 1.0) * n_feature)


def copies_needed(n_target: int, n_feature: int, cutoff: float, pfer: float, *, most: int = 500) -> int | None:
    """The fewest copies ``G`` from which on :func:`false_stable_bound` at ``cutoff`` is at
    most ``pfer`` for every number of copies up to ``most``; None when none is.

    The bound is not monotone in ``G`` (the count a feature needs, ``ceil(cutoff G)``, moves
    in steps), so the fewest copies that meet it once can be followed by more that do not:
    this is the count from which more copies keep it met. No ``G`` is when :func:`mb_pfer`
    at ``cutoff`` is ``pfer`` or more: the finite-copies bound exceeds it at every ``G``.
    """
    return _copies_needed(int(n_target), int(n_feature), float(cutoff), float(pfer), int(most))


# One key per question however it is asked (keywords or not, numpy scalars or not): every
# estimate of one problem asks the same ones, a PFER's advice a whole grid of them.
@functools.lru_cache(maxsize=256)
def _copies_needed(n_target: int, n_feature: int, cutoff: float, pfer: float, most: int) -> int | None:
    if not mb_pfer(n_target, n_feature, cutoff) < pfer:
        return None
    met = _bounds(n_target, n_feature, np.arange(1, most + 1), cutoff) <= pfer
    if not met[-1]:
        return None
    return 1 if met.all() else most + 1 - int(np.argmin(met[::-1]))


#: The cutoffs :func:`copies_for_pfer` tries: the multiples of 0.05 above 1/2.
CUTOFF_GRID = tuple(round(0.55 + 0.05 * i, 2) for i in range(10))


def copies_for_pfer(n_target: int, n_feature: int, pfer: float, *, most: int = 500) -> tuple[float, int] | None:
    """The fewest copies that bound the expected false stable features by ``pfer`` at a
    finite number of copies, with the lowest cutoff of :data:`CUTOFF_GRID` that does it with
    them: ``(cutoff, copies)`` (:func:`copies_needed`); None when no cutoff of the grid does
    within ``most`` copies.

    At :func:`mb_cutoff` itself no finite number of copies reaches ``pfer`` (the finite-copies
    bound exceeds Meinshausen and Buhlmann's, which equals ``pfer`` there, and tends to it
    only as the copies grow without end): a bound of ``pfer`` that holds for the copies
    measured needs a higher cutoff, and this is the one of the grid that needs the fewest.
    """
    found = [(G, c) for c in CUTOFF_GRID if (G := copies_needed(n_target, n_feature, c, pfer, most=most)) is not None]
    if not found:
        return None
    G, c = min(found)
    return c, G


def cutoff_of(settings: EstimateSettings) -> float:
    """The cutoff the stable features are kept at: :func:`mb_cutoff` of the ``pfer`` asked
    for, else the ``cutoff``."""
    if settings.pfer is not None:
        return mb_cutoff(settings.n_target, settings.n_feature, settings.pfer)
    return settings.cutoff


def _clopper_pearson(copies: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper and Pearson's interval of a binomial proportion, for every count 0..copies
    (scipy's exact interval of :func:`scipy.stats.binomtest`)."""
    ends = [stats.binomtest(c, copies).proportion_ci(confidence, method="exact") for c in range(copies + 1)]
    return np.array([e.low for e in ends]), np.array([e.high for e in ends])


def selection_frequencies(
    ranks: np.ndarray,
    n_target: int,
    sizes: Sequence[int],
    *,
    aggregate: str = "mean_rank",
    seed: SeedLike = 0,
    confidence: float = 0.95,
    names=None,
    cutoff: float = FREQUENT,
) -> xr.Dataset:
    """Each feature's selection frequency at each size, with its interval, and its mean rank.

    Parameters
    ----------
    ranks : int array, shape (G, B, n_feature)
        The real ensemble copies' ranks (any G and B).
    n_target : int
        Features an ensemble keeps.
    sizes : sequence of int
        Ensemble sizes, each in ``[1, B]`` (:func:`measured_sizes`).
    aggregate : str
        The ensemble algorithm.
    seed : int, SeedSequence or Generator
        For the choice of each copy's members at each size and the aggregation's tie-breaks.
    confidence : float
        Level of the Clopper-Pearson intervals.
    names : sequence of str, optional
        The features' names (:func:`feature_names_of`).
    cutoff : float
        The frequency a stable feature reaches (:func:`stable_features`), in (1/2, 1].

    Returns
    -------
    xarray.Dataset
        ``frequency``, ``frequency_lower``, ``frequency_upper`` and ``count`` over
        (``feature``, ``m_measured``), ``mean_rank`` over ``feature``, the names as the
        ``feature_name`` coordinate; in ``attrs`` the copies, the ``threshold`` (``cutoff``),
        :func:`false_stable_bound` and :func:`mb_pfer` at it (:func:`with_pfer` adds a PFER's).

    Examples
    --------
    >>> import numpy as np
    >>> ranks = np.array([[[1, 2, 3, 4], [2, 1, 3, 4]], [[1, 3, 2, 4], [1, 4, 2, 3]]])  # 2 copies of 2
    >>> ds = selection_frequencies(ranks, 2, [1, 2], names=["a", "b", "c", "d"])
    >>> ds["frequency"].sel(m_measured=2).values.tolist(), ds["feature_name"].values.tolist()
    ([1.0, 0.5, 0.5, 0.0], ['a', 'b', 'c', 'd'])
    """
    ranks = np.asarray(ranks)
    G, B, n_feature = ranks.shape
    sizes = [int(m) for m in sizes]
    if not sizes or min(sizes) < 1 or max(sizes) > B:
        raise InvalidParameterError(f"sizes must lie in [1, {B}], the weak selectors of a copy; got {sizes}")
    rng = make_rng(seed)
    counts = np.empty((n_feature, len(sizes)), dtype=np.int64)
    for j, m in enumerate(sizes):
        top = copy_ensembles(ranks, n_target, m, rng, aggregate=aggregate)
        counts[:, j] = np.bincount(top.ravel(), minlength=n_feature)
    lower, upper = _clopper_pearson(G, confidence)
    mean_rank = ranks.reshape(G * B, n_feature).mean(axis=0)
    level = f"{confidence:.0%}"
    dims = ("feature", "m_measured")
    frequency = {
        "long_name": "selection frequency",
        "units": "1",
        "description": f"fraction of {G} real ensemble copies that keep it",
    }
    ranked = {"long_name": "mean rank", "units": "rank", "description": f"over the {G * B} real runs of the copies"}
    named = ("feature", feature_names_of(names, n_feature))
    ds = xr.Dataset(
        {
            "frequency": (dims, counts / G, frequency),
            "frequency_lower": (dims, lower[counts], {"long_name": f"{level} lower", "units": "1"}),
            "frequency_upper": (dims, upper[counts], {"long_name": f"{level} upper", "units": "1"}),
            "count": (dims, counts, {"long_name": "copies keeping it", "units": "copies"}),
            "mean_rank": ("feature", mean_rank, ranked),
        },
        coords={"feature": np.arange(n_feature), "m_measured": sizes, "feature_name": named},
    )
    ds["m_measured"].attrs = {"long_name": "m_measured", "units": "selectors"}
    ds.attrs = {
        "n_target": int(n_target),
        "copies": int(G),
        "members": int(B),
        "confidence": float(confidence),
        "interval": "Clopper-Pearson over the copies",
        "threshold": float(cutoff),
        "false_stable_bound": false_stable_bound(n_target, n_feature, G, cutoff),
        "bound": BOUND_NAME,
        "mb_pfer": mb_pfer(n_target, n_feature, cutoff),
    }
    return ds


def with_pfer(features: xr.Dataset, pfer: float | None) -> xr.Dataset:
    """``features`` with the ``pfer`` asked for in its ``attrs`` (none without one), and what
    bounds the expected false stable features by it (by 1 without a ``pfer``) at finitely
    many copies: ``bound_target``, and ``copies_needed`` at ``copies_needed_cutoff``: the
    cutoff kept where some number of copies does it there (:func:`copies_needed`), else the
    lowest cutoff of the grid the copies measured already bound it at (with those copies),
    else :func:`copies_for_pfer`'s (both left out when no cutoff of the grid does)."""
    q, p, cutoff = features.attrs["n_target"], features.sizes["feature"], features.attrs["threshold"]
    target = 1.0 if pfer is None else float(pfer)
    features.attrs["bound_target"] = target
    if pfer is not None:
        features.attrs["pfer"] = target
    G = copies_needed(q, p, cutoff, target)  # never at a pfer's own cutoff (Meinshausen and Buhlmann's)
    enough = (cutoff, G) if G is not None else _elsewhere(q, p, target, int(features.attrs["copies"]))
    if enough is not None:
        features.attrs.update(copies_needed_cutoff=enough[0], copies_needed=enough[1])
    return features


def _elsewhere(q: int, p: int, target: float, have: int) -> tuple[float, int] | None:
    """Where no number of copies bounds the noise by ``target`` at the cutoff asked: the
    lowest cutoff of the grid the ``have`` copies measured already bound it at, else
    :func:`copies_for_pfer`'s fewest copies (None when no cutoff of the grid does)."""
    for c in CUTOFF_GRID:
        needed = copies_needed(q, p, c, target)
        if needed is not None and needed <= have:
            return c, have
    return copies_for_pfer(q, p, target)


def feature_order(features: xr.Dataset) -> np.ndarray:
    """The features by frequency at the largest size (most often kept first), then by mean rank."""
    top = features["frequency"].values[:, -1]
    return np.lexsort((features["feature"].values, features["mean_rank"].values, -top))


def feature_table(features: xr.Dataset):
    """The frequencies as a pandas table, one row per feature, sorted by the frequency at the
    largest size: ``name``, ``feature`` (its column in X), ``frequency_m<size>`` per size,
    ``mean_rank``, then ``frequency_m<size>_lower`` and ``_upper``."""
    import pandas as pd

    order = feature_order(features)
    sizes = [int(m) for m in features["m_measured"].values]
    columns: dict[str, np.ndarray] = {"name": features["feature_name"].values[order], "feature": order}
    suffixes = (("frequency", ""), ("mean_rank", None), ("frequency_lower", "_lower"), ("frequency_upper", "_upper"))
    for key, suffix in suffixes:
        values = features[key].values[order]
        if suffix is None:
            columns[key] = values
            continue
        for j, m in enumerate(sizes):
            columns[f"frequency_m{m}{suffix}"] = values[:, j]
    return pd.DataFrame(columns)


def feature_rows(features: xr.Dataset, top: int = 100) -> list[dict]:
    """The first ``top`` rows of :func:`feature_table`, as JSON holds them."""
    table = feature_table(features).head(top)
    return [
        {k: (str(v) if k == "name" else int(v) if k == "feature" else json_number(v)) for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]


def stable_features(features: xr.Dataset) -> dict:
    """The features an ensemble of the largest size keeps on at least the cutoff's share of
    the copies (``attrs["threshold"]``), most often kept first, with the bound on how many of
    them are expected by chance at these copies, Meinshausen and Buhlmann's at the cutoff
    (``mb_pfer``) and, for a ``pfer`` asked for, the copies it needs (keys left out where
    the features' ``attrs`` lack them)."""
    order = feature_order(features)
    freq = features["frequency"].values[order, -1]
    kept = freq >= features.attrs["threshold"] - 1e-12
    return {
        "threshold": float(features.attrs["threshold"]),
        "m_ensemble": int(features["m_measured"].values[-1]),
        "copies": int(features.attrs["copies"]),
        "names": [str(n) for n in features["feature_name"].values[order][kept]],
        "frequency": [float(f) for f in freq[kept]],
        "expected_false_at_most": json_number(features.attrs["false_stable_bound"]),
        "bound": str(features.attrs["bound"]),
        "most_frequent": str(features["feature_name"].values[order[0]]),
        "most_frequent_frequency": float(freq[0]),
        **{key: _attr(features, key) for key in _PFER_KEYS if key in features.attrs},
    }


#: The features' ``attrs`` on the cutoff and the PFER that :func:`stable_features` passes on
#: where they are (an older file has none; only a ``pfer`` asked for has ``pfer``).
_PFER_KEYS = ("mb_pfer", "pfer", "bound_target", "copies_needed", "copies_needed_cutoff")


def _attr(features: xr.Dataset, key: str):
    """A number of the features' ``attrs`` as JSON holds it."""
    value = features.attrs[key]
    return int(value) if key == "copies_needed" else json_number(value)


#: The first characters that make a spreadsheet read a cell as a formula (OWASP's list),
#: and the quote that escapes them, so that a name which begins with it stays recoverable.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def spreadsheet_safe(name: str) -> str:
    """``name`` as a CSV cell that no spreadsheet runs: a name that begins with ``=``,
    ``+``, ``-``, ``@``, a tab, a carriage return or ``'`` gets a leading ``'``.

    The real name is the cell without its first character whenever the cell begins with
    ``'``; every other cell is the name as it is.
    """
    return "'" + name if name.startswith(_FORMULA_STARTS) else name


def write_feature_table(features: xr.Dataset, out: str | os.PathLike, *, overwrite: bool = False):
    """Write :func:`feature_table` as CSV, whole or not at all
    (:func:`~ensstab_dask.outputs.atomic_output`), its names made safe to open in a
    spreadsheet (:func:`spreadsheet_safe`) and in a terminal (their control characters
    made visible, :func:`~ensstab_dask.outputs.visible.visible`). Returns the path."""
    # Its header begins with FEATURE_TABLE_HEADER: what lets overwrite=True replace it later
    # (any other CSV file is taken for data, and never replaced).
    table = feature_table(features)
    table["name"] = [spreadsheet_safe(visible(n)) for n in table["name"]]
    with atomic_output(out, overwrite=overwrite) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    return out
