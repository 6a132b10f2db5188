"""An estimate's selection frequencies written back into an AnnData's ``var``, as scanpy
writes its results there: per feature, or per group of
:func:`~ensstab_dask.estimates.groups.estimate_groups` with each group's stable features
in ``uns`` (as ``rank_genes_groups`` records its markers)."""

from __future__ import annotations

import numpy as np

from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.formats import shown_name

__all__ = ["write_frequencies_to_var"]


def write_frequencies_to_var(adata, features, *, key: str = "ensstab", overwrite: bool = False) -> list[str]:
    """Write each feature's selection frequency at the largest measured ensemble size B,
    its interval and its mean rank into ``adata.var`` (as scanpy writes its results there),
    matched on ``var_names``: columns ``{key}_frequency_m{B}``, ``..._lower``,
    ``..._upper`` and ``{key}_mean_rank``; a var that is not among the features gets NaN.

    ``features`` is an estimate's ``est.features``, or the
    :class:`~ensstab_dask.estimates.groups.GroupEstimates` of :func:`~ensstab_dask.estimate_groups`:
    then each group's columns, ``{key}_{group}_frequency_m{B}`` and the rest, and
    ``adata.uns[f"{key}_markers"]``, scanpy-style: ``params`` (groupby, reference) and
    ``names``, each group's stable features. A feature name that is not a var name is
    refused (the frequencies are of another object), and so is a column that exists
    already, unless ``overwrite``, before anything is written. Returns the columns written.

    Examples
    --------
    >>> write_frequencies_to_var(adata, est.features)  # doctest: +SKIP
    ['ensstab_frequency_m20', 'ensstab_frequency_m20_lower', 'ensstab_frequency_m20_upper', 'ensstab_mean_rank']
    """
    if hasattr(features, "estimates"):  # one estimate per group
        return _write_groups(adata, features, key=key, overwrite=overwrite)
    columns, at = _columns(adata, features, key=key, overwrite=overwrite)
    for column, values in columns.items():
        full = np.full(adata.n_vars, np.nan)
        full[at] = values
        adata.var[column] = full
    return list(columns)


def _write_groups(adata, groups, *, key: str, overwrite: bool) -> list[str]:
    """Every group's columns, all checked before any is written, and the markers in ``uns``."""
    made = [_columns(adata, est.features, key=f"{key}_{g}", overwrite=overwrite) for g, est in groups.estimates.items()]
    if f"{key}_markers" in adata.uns and not overwrite:
        raise InvalidParameterError(f"adata.uns has {key}_markers already; pass overwrite=True to replace it")
    written = []
    for columns, at in made:
        for column, values in columns.items():
            full = np.full(adata.n_vars, np.nan)
            full[at] = values
            adata.var[column] = full
        written += list(columns)
    params = {"groupby": groups.groupby, "reference": groups.reference}
    adata.uns[f"{key}_markers"] = {
        "params": params,
        "names": {g: np.array(n, dtype=str) for g, n in groups.markers().items()},
    }
    return written


def _columns(adata, features, *, key: str, overwrite: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The columns of one estimate's ``features``, and where its features are among the vars."""
    if features is None:
        raise InvalidParameterError("features is None: this estimate's model ran no real ensemble copies")
    names_coord = next((c for c in ("feature_name", "name") if c in features.coords), None)
    size_dim = next((d for d in ("m_measured", "m_ensemble") if d in features["frequency"].dims), None)
    if names_coord is None or size_dim is None:
        raise InvalidParameterError("features must be an estimate's features (est.features)")
    names = [str(n) for n in features[names_coord].values]
    var_names = [str(n) for n in adata.var_names]
    where = {name: i for i, name in enumerate(var_names)}
    missing = [n for n in names if n not in where]
    if missing or len(where) != len(var_names):
        why = f"{len(missing)} feature names are not var names, the first {shown_name(missing[0])}" if missing else ""
        raise InvalidParameterError(f"adata: {why or 'var_names repeat'}; make them unique and match the features")
    B = int(features[size_dim].values[-1])
    at = np.array([where[n] for n in names])
    columns = {}
    for var, suffix in (("frequency", ""), ("frequency_lower", "_lower"), ("frequency_upper", "_upper")):
        columns[f"{key}_frequency_m{B}{suffix}"] = features[var].isel({size_dim: -1}).values
    columns[f"{key}_mean_rank"] = features["mean_rank"].values
    taken = [c for c in columns if c in adata.var.columns]
    if taken and not overwrite:
        raise InvalidParameterError(f"adata.var has {shown_name(taken[0])} already; pass overwrite=True to replace it")
    return columns, at
