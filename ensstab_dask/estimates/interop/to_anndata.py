"""An estimate's selection frequencies written back into an AnnData, where scanpy users
look: per feature in ``var``, or per group of
:func:`~ensstab_dask.estimates.stages.groups.estimate_groups` in ``var`` and, in ``uns``, each
group's genes ranked by selection frequency in the layout of scanpy's
``rank_genes_groups`` (so that ``sc.get.rank_genes_groups_df`` and the
``sc.pl.rank_genes_groups_*`` plots read them)."""

from __future__ import annotations

import numpy as np

from ensstab_dask.estimates.stages.features import feature_order
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real.formats import shown_name
from ensstab_dask.wording import param, words

__all__ = ["write_frequencies_to_var", "rank_genes_groups_layout"]


def write_frequencies_to_var(
    adata,
    features,
    *,
    key: str = "ensstab",
    overwrite: bool = False,
    n_genes: int = 100,
    layer: str | None = None,
    use_raw: bool | None = None,
) -> list[str]:
    """Write each feature's selection frequency at the largest measured ensemble size B,
    its interval and its mean rank into ``adata.var`` (as scanpy writes its results there),
    matched on ``var_names``: columns ``{key}_frequency_m{B}``, ``..._lower``,
    ``..._upper`` and ``{key}_mean_rank``; a var that is not among the features gets NaN.

    ``features`` is an estimate's ``est.features``, or the
    :class:`~ensstab_dask.estimates.stages.groups.GroupEstimates` of :func:`~ensstab_dask.estimate_groups`:
    then each group's columns, ``{key}_{group}_frequency_m{B}`` and the rest, and
    ``adata.uns[f"{key}_markers"]`` in the layout of scanpy's ``rank_genes_groups``
    (:func:`rank_genes_groups_layout`: each group's ``n_genes`` most often kept genes,
    their selection frequency as ``scores``, the direction and log fold change of the group
    against its reference on the matrix ``layer`` or ``use_raw`` name, by scanpy's rule:
    ``adata.raw`` where there is one and no layer is named). A feature name that is not a var name is refused (the
    frequencies are of another object), and so is a column or key that exists already,
    unless ``overwrite``, before anything is written. Returns the columns written.

    Examples
    --------
    >>> write_frequencies_to_var(adata, est.features)  # doctest: +SKIP
    ['ensstab_frequency_m20', 'ensstab_frequency_m20_lower', 'ensstab_frequency_m20_upper', 'ensstab_mean_rank']
    """
    if hasattr(features, "estimates"):  # one estimate per group
        return _write_groups(
            adata, features, key=key, overwrite=overwrite, layout=dict(n_genes=n_genes, layer=layer, use_raw=use_raw)
        )
    columns, at = _columns(adata, features, key=key, overwrite=overwrite)
    for column, values in columns.items():
        full = np.full(adata.n_vars, np.nan)
        full[at] = values
        adata.var[column] = full
    return list(columns)


def _write_groups(adata, groups, *, key: str, overwrite: bool, layout: dict) -> list[str]:
    """Every group's columns and the markers' layout, all made before any is written."""
    made = [_columns(adata, est.features, key=f"{key}_{g}", overwrite=overwrite) for g, est in groups.estimates.items()]
    if f"{key}_markers" in adata.uns and not overwrite:
        raise InvalidParameterError(
            f"adata.uns has {key}_markers already; pass " + param("overwrite", True) + " to replace it"
        )
    markers = rank_genes_groups_layout(adata, groups, **layout)
    written = []
    for columns, at in made:
        for column, values in columns.items():
            full = np.full(adata.n_vars, np.nan)
            full[at] = values
            adata.var[column] = full
        written += list(columns)
    adata.uns[f"{key}_markers"] = markers
    return written


#: What the layout's ``params`` say of each of its fields, for a reader of the file.
_SAID = {
    "scores": "selection frequency at m_ensemble: the share of the real ensembles of that size that keep the gene "
    "in their top n_target (not a test statistic)",
    "logfoldchanges": "log2 fold change of the group's mean over the reference's, as rank_genes_groups computes it "
    "(expm1 of the matrix, which it takes to be log1p data)",
    "direction": "up: higher in the group than in its reference; down: lower; same: equal means",
    "pvals": "none: a selection frequency is no test; NaN, so that rank_genes_groups_df reads the layout",
    "frequency_lower": "lower end of the selection frequency's interval over the real ensembles",
    "frequency_upper": "upper end of the selection frequency's interval over the real ensembles",
    "stable": "kept on at least the cutoff's share of the real ensembles (the stable features)",
}


def rank_genes_groups_layout(
    adata, groups, *, n_genes: int = 100, layer: str | None = None, use_raw: bool | None = None
):
    """The markers of :func:`~ensstab_dask.estimate_groups` as scanpy's ``rank_genes_groups``
    keeps its results in ``uns[key]``: ``names``, ``scores``, ``logfoldchanges``, ``pvals``
    and ``pvals_adj`` as record arrays with one field per group, each group's ``n_genes``
    genes most often kept by an ensemble of the largest measured size first (then by mean
    rank), ``pts`` and ``pts_rest`` (the share of cells expressing each gene in the group
    and in its reference, as ``pts=True`` gives them), and ``params``.

    ``scores`` are the selection frequencies, and ``frequency_lower``,
    ``frequency_upper``, ``stable`` and ``direction`` add their interval, whether the gene
    is a stable one and which way it differs; ``pvals`` and ``pvals_adj`` are NaN (a
    selection frequency is no test). The means behind ``logfoldchanges``, ``direction``
    and ``pts`` are over the group's cells and the reference's (every other cell, or the
    reference group's) in the matrix ``rank_genes_groups`` would read: ``layer``, or
    ``adata.raw`` with ``use_raw`` (None: where there is one and no layer is named, as
    scanpy's default), else ``adata.X``. Log fold changes take the matrix to be log1p
    data, as scanpy's do: on scaled values (below 0) they are NaN, said in ``params``.
    ``params`` say what each field is (``params["fields"]``), with ``groupby``,
    ``reference``, ``method`` (``"ensstab_dask"``), ``m_ensemble``, ``copies`` and
    ``cutoff``."""
    import pandas as pd

    if not groups.groupby or groups.groupby not in adata.obs:
        raise InvalidParameterError(
            f"groups.groupby {groups.groupby!r} is not a column of adata.obs: the markers' groups are read from it"
        )
    use_raw = adata.raw is not None and layer is None if use_raw is None else bool(use_raw)
    X, var_names = _matrix(adata, layer, use_raw)
    where = {str(name): i for i, name in enumerate(var_names)}
    labels = np.asarray(adata.obs[groups.groupby].astype(str))
    base = (adata.uns.get("log1p") or {}).get("base") if hasattr(adata.uns, "get") else None
    grow = np.expm1 if base is None else (lambda x, b=float(base): np.expm1(x * np.log(b)))
    first = next(iter(groups.estimates.values())).features
    fields: dict[str, dict[str, np.ndarray]] = {}
    pts, pts_rest = {}, {}
    for g, est in groups.estimates.items():
        inside = labels == g
        reference = ~inside if groups.reference == "rest" else labels == groups.reference
        try:
            for name, values in _group_fields(est.features, X, where, inside, reference, n_genes, grow).items():
                fields.setdefault(name, {})[g] = values
        except KeyError as missing:
            raise InvalidParameterError(
                f"adata: {shown_name(missing.args[0])} is not a var name of the matrix read ("
                + words(param("layer", layer), ", ", param("use_raw", use_raw))
                + "); pass the layer and use_raw the estimate read"
            ) from None
        pts[g], pts_rest[g] = _expressing(X, inside), _expressing(X, reference)
    length = min(len(v) for v in fields["names"].values())
    layout = {
        name: pd.DataFrame({g: v[:length] for g, v in per_group.items()}).to_records(index=False)
        for name, per_group in fields.items()
    }
    index = pd.Index([str(n) for n in var_names])
    layout["pts"] = pd.DataFrame(pts, index=index)
    layout["pts_rest"] = pd.DataFrame(pts_rest, index=index)
    layout["params"] = {
        "groupby": groups.groupby,
        "reference": groups.reference,
        "method": "ensstab_dask",
        "use_raw": bool(use_raw),
        "layer": "" if layer is None else str(layer),
        "corr_method": "none",
        "m_ensemble": int(first["m_measured"].values[-1]),
        "copies": int(first.attrs["copies"]),
        "cutoff": float(first.attrs["threshold"]),
        "fields": dict(_SAID),
    }
    if _has_negative(X):
        layout["params"]["fields"]["logfoldchanges"] += (
            "; NaN here where a mean is below 0: this matrix holds values below 0 (scaled?), pass the log1p one "
            "(layer, use_raw)"
        )
    return layout


def _group_fields(features, X, where: dict, inside: np.ndarray, reference: np.ndarray, n_genes: int, grow) -> dict:
    """One group's fields of the layout: its ``n_genes`` genes most often kept first, each
    with its frequency and interval, and its direction and log fold change (``grow``: what
    undoes the log1p) against the reference's cells. A name not among ``where`` (the
    matrix's var names) raises KeyError with it."""
    order = feature_order(features)[: min(n_genes, features.sizes["feature"])]
    names = [str(n) for n in features["feature_name"].values[order]]
    cols = np.array([where[n] for n in names])
    mean_in, mean_ref = _means(X, inside)[cols], _means(X, reference)[cols]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lfc = np.log2((grow(mean_in) + 1e-9) / (grow(mean_ref) + 1e-9))
    freq = features["frequency"].values[order, -1]
    return {
        "names": np.array(names, dtype=object),
        "scores": freq.astype(np.float32),
        "logfoldchanges": lfc.astype(np.float32),
        "direction": np.where(mean_in > mean_ref, "up", np.where(mean_in < mean_ref, "down", "same")).astype(object),
        "pvals": np.full(len(order), np.nan),
        "pvals_adj": np.full(len(order), np.nan),
        "frequency_lower": features["frequency_lower"].values[order, -1].astype(np.float32),
        "frequency_upper": features["frequency_upper"].values[order, -1].astype(np.float32),
        "stable": freq >= features.attrs["threshold"] - 1e-12,
    }


def _matrix(adata, layer: str | None, use_raw: bool):
    """The matrix the estimate read, and its var names."""
    if use_raw:
        if adata.raw is None:
            raise InvalidParameterError(param("use_raw", True) + ": adata has no .raw")
        return adata.raw.X, adata.raw.var_names
    if layer is not None:
        if layer not in adata.layers:
            raise InvalidParameterError(
                param("layer") + f" {layer!r} is not a layer of adata (its layers: {list(adata.layers)})"
            )
        return adata.layers[layer], adata.var_names
    return adata.X, adata.var_names


def _has_negative(X) -> bool:
    values = X.data if hasattr(X, "data") and hasattr(X, "indices") else np.asarray(X)
    return bool(values.size) and float(np.min(values)) < 0


def _means(X, rows: np.ndarray) -> np.ndarray:
    """Each column's mean over ``rows`` (a boolean mask), dense or sparse, in float64."""
    if not rows.any():
        return np.full(X.shape[1], np.nan)
    return np.asarray(X[rows].mean(axis=0, dtype=np.float64)).ravel()


def _expressing(X, rows: np.ndarray) -> np.ndarray:
    """Each column's share of ``rows`` (a boolean mask) with a value other than 0."""
    part = X[rows]
    nonzero = part.getnnz(axis=0) if hasattr(part, "getnnz") else np.count_nonzero(np.asarray(part), axis=0)
    return nonzero / max(int(rows.sum()), 1)


def _columns(adata, features, *, key: str, overwrite: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The columns of one estimate's ``features``, and where its features are among the vars."""
    if features is None:
        raise InvalidParameterError(param("features") + " is None: this estimate's model ran no real ensemble copies")
    names_coord = next((c for c in ("feature_name", "name") if c in features.coords), None)
    size_dim = next((d for d in ("m_measured", "m_ensemble") if d in features["frequency"].dims), None)
    if names_coord is None or size_dim is None:
        raise InvalidParameterError(param("features") + " must be an estimate's features (est.features)")
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
        raise InvalidParameterError(
            f"adata.var has {shown_name(taken[0])} already; pass " + param("overwrite", True) + " to replace it"
        )
    return columns, at
