"""AnnData ``.h5ad`` input (the single-cell world's format): load_dataset and ``ensstab estimate --data``.

The files are written with the real ``anndata`` package; its absence is simulated by
putting None in ``sys.modules`` (which makes ``import anndata`` fail).
"""

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse

from ensstab_dask.cli import main
from ensstab_dask.exceptions import InvalidParameterError
from ensstab_dask.real import formats
from ensstab_dask.real.datasets import load_dataset

anndata = pytest.importorskip("anndata", reason="anndata is not installed (pip install '.[test]' or '.[anndata]')")
pd = pytest.importorskip("pandas")

N_OBS, N_VARS = 30, 60


def _study(seed: int = 0):
    """A small two-condition study: 30 cells x 60 genes, the first 6 genes shifted in 'stim',
    about half the values zero (as counts are), and a second obs column so the label must be named."""
    rng = np.random.default_rng(seed)
    condition = np.repeat(["ctrl", "stim"], N_OBS // 2)
    X = rng.standard_normal((N_OBS, N_VARS))
    X[condition == "stim", :6] += 2.0
    X[X < 0] = 0.0
    obs = pd.DataFrame(
        {
            "condition": pd.Categorical(condition, categories=["ctrl", "stim"]),
            "batch": pd.Categorical(np.tile(["b1", "b2", "b3"], N_OBS // 3)),
        },
        index=[f"cell{i}" for i in range(N_OBS)],
    )
    var = pd.DataFrame(index=[f"gene{j}" for j in range(N_VARS)])
    return X.astype(np.float32), obs, var


def _write(path, *, sparse: bool, seed: int = 0):
    X, obs, var = _study(seed)
    anndata.AnnData(X=scipy.sparse.csr_matrix(X) if sparse else X, obs=obs, var=var).write_h5ad(path)
    return X, obs


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_h5ad_reads_x_labels_and_gene_names(tmp_path, sparse):
    path = tmp_path / "study.h5ad"
    X, obs = _write(path, sparse=sparse)
    d = load_dataset(path, label="condition")
    if sparse:  # kept sparse, as the trees take it: CSC float32
        assert scipy.sparse.issparse(d.X) and d.X.format == "csc" and d.X.dtype == np.float32
        np.testing.assert_array_equal(d.X.toarray(), X)
    else:
        assert isinstance(d.X, np.ndarray) and d.X.dtype == np.float64 and d.X.shape == (N_OBS, N_VARS)
        np.testing.assert_array_equal(d.X, X.astype(np.float64))
    # The categorical column's labels, as strings (check_data takes string labels as they are).
    assert d.y.tolist() == obs["condition"].astype(str).tolist()
    assert sorted(set(d.y.tolist())) == ["ctrl", "stim"]
    assert d.feature_names.tolist() == [f"gene{j}" for j in range(N_VARS)]
    # By position too, as for CSV (the CLI passes a number as a position).
    assert load_dataset(path, label=0).y.tolist() == d.y.tolist()
    assert load_dataset(path, label="batch").y.tolist() == obs["batch"].astype(str).tolist()


def test_h5ad_label_must_be_named_and_known(tmp_path):
    path = tmp_path / "study.h5ad"
    _write(path, sparse=True)
    with pytest.raises(InvalidParameterError, match=r"choose the label column .*\['condition', 'batch'\]"):
        load_dataset(path)
    with pytest.raises(InvalidParameterError) as info:
        load_dataset(path, label="cell_type")
    assert "label column 'cell_type' is missing; obs columns are ['condition', 'batch']" in str(info.value)
    with pytest.raises(InvalidParameterError, match="index 5 is out of range for 2 columns"):
        load_dataset(path, label=5)


def test_h5ad_label_is_found_when_obs_has_one_label_column(tmp_path):
    path = tmp_path / "study.h5ad"
    X, obs, var = _study()
    obs = obs.rename(columns={"condition": "label"})
    anndata.AnnData(X=X, obs=obs, var=var).write_h5ad(path)
    assert load_dataset(path).y.tolist() == obs["label"].astype(str).tolist()


def test_h5ad_missing_labels_and_junk_files_are_refused(tmp_path):
    X, obs, var = _study()
    obs["condition"] = obs["condition"].astype(object).where(np.arange(N_OBS) != 3, None)
    anndata.AnnData(X=X, obs=obs, var=var).write_h5ad(tmp_path / "gap.h5ad")
    with pytest.raises(InvalidParameterError, match="missing labels"):
        load_dataset(tmp_path / "gap.h5ad", label="condition")
    (tmp_path / "junk.h5ad").write_bytes(b"not an HDF5 file")
    with pytest.raises(InvalidParameterError, match="not a readable .h5ad file"):
        load_dataset(tmp_path / "junk.h5ad", label="condition")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_h5ad_too_large_is_refused_before_converting_priced_as_it_would_be(tmp_path, monkeypatch, sparse):
    path = tmp_path / "study.h5ad"
    X, _ = _write(path, sparse=sparse)
    monkeypatch.setattr(formats, "_available_bytes", lambda: 1000)
    priced = (
        f"as a sparse CSC float32 matrix ({int((X != 0).sum()):,} stored values)" if sparse else "as a dense float64"
    )
    with pytest.raises(InvalidParameterError, match=r"X \(30 obs x 60 vars\) needs") as info:
        load_dataset(path, label="condition")
    assert priced in str(info.value)


def test_a_directory_is_not_a_data_file(tmp_path):
    with pytest.raises(InvalidParameterError, match="is a directory; give a .mat, .npz, .csv or .h5ad file"):
        load_dataset(tmp_path)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        load_dataset(tmp_path / "nope.h5ad")
    with pytest.raises(InvalidParameterError, match=r"unknown format '.loom'; use .mat, .npz, .csv or .h5ad"):
        (tmp_path / "x.loom").write_bytes(b"")
        load_dataset(tmp_path / "x.loom")


def test_without_anndata_h5ad_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    path = tmp_path / "study.h5ad"
    _write(path, sparse=False)
    monkeypatch.setitem(sys.modules, "anndata", None)  # `import anndata` now fails
    with pytest.raises(
        InvalidParameterError, match=r"needs the anndata package: pip install 'ensstab_dask\[anndata\]'"
    ):
        load_dataset(path, label="condition")
    assert main(["estimate", "--data", str(path), "--label", "condition"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs the anndata package" in err and "Traceback" not in err


def test_cli_bad_obs_column_is_one_line_exit_2(tmp_path, monkeypatch):
    # A relative path, named like an option: the message names the file, not --data.
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "data.h5ad", sparse=True)
    res = subprocess.run(
        [sys.executable, "-m", "ensstab_dask.cli", "estimate", "--data", "data.h5ad", "--label", "cell_type"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert lines == [
        "ensstab: error: data.h5ad: label column 'cell_type' is missing; obs columns are ['condition', 'batch']"
    ], res.stderr


@pytest.mark.slow
def test_cli_estimate_on_h5ad(tmp_path, capsys):
    path = tmp_path / "study.h5ad"
    _write(path, sparse=True)
    out = tmp_path / "e.json"
    args = ["estimate", "--data", str(path), "--label", "condition", "--n-target", "5", "--m-ensemble", "1,3"]
    args += ["--m-stability", "6", "--n-runs", "12", "--repeats", "3", "--n-boot", "0", "--n-estimators", "20"]
    args += ["--scheduler", "synchronous", "--quiet", "--json", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    d = json.loads(out.read_text())
    assert ("  reliable: yes" in printed) == d["reliable"] and ("  reliable: NO" in printed) == (not d["reliable"])
    assert d["n_feature"] == N_VARS and d["n_target"] == 5


def test_repeated_var_names_are_made_unique_and_said_once(tmp_path, caplog, capsys):
    """Repeated gene names were taken as they were, two rows of one name in a feature table;
    anndata's own warning about them came as a note of another library's."""
    X, obs, _ = _study()
    names = [f"gene{j}" for j in range(N_VARS)]
    names[1] = names[2] = names[3] = "MT-CO1"
    with pytest.warns(UserWarning, match="Variable names are not unique"):
        anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=names)).write_h5ad(tmp_path / "d.h5ad")
    d = load_dataset(tmp_path / "d.h5ad", label="condition")
    assert d.feature_names[:5].tolist() == ["gene0", "MT-CO1", "MT-CO1-1", "MT-CO1-2", "gene4"]
    said = [r.getMessage() for r in caplog.records if r.name == "ensstab_dask.real.datasets"]
    assert said == [
        f"{tmp_path / 'd.h5ad'}: 1 feature name(s) repeat ('MT-CO1' x3): made unique as scanpy's "
        "var_names_make_unique does ('MT-CO1', 'MT-CO1-1', 'MT-CO1-2')"
    ]
    args = ["estimate", "--data", str(tmp_path / "d.h5ad"), "--label", "condition", "--n-target", "5"]
    args += ["--n-estimators", "5", "--m-ensemble", "1,3", "--n-boot", "0", "--scheduler", "synchronous", "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count("feature name(s) repeat") == 1 and "other libraries" not in err and "not unique" not in err, err


def _layered(path):
    """A study whose X is log-scaled, with the counts in a layer and in raw (a scanpy habit)."""
    X, obs, var = _study()
    counts = np.round(np.expm1(X.astype(np.float64)) * 10)
    adata = anndata.AnnData(X=np.log1p(counts).astype(np.float32), obs=obs, var=var)
    adata.layers["counts"] = scipy.sparse.csr_matrix(counts)
    adata.raw = anndata.AnnData(X=counts, obs=obs, var=pd.DataFrame(index=[f"raw{j}" for j in range(N_VARS)]))
    adata.write_h5ad(path)
    return counts, adata


def test_layer_and_use_raw_read_the_matrix_scanpy_would(tmp_path):
    path = tmp_path / "layered.h5ad"
    counts, adata = _layered(path)
    np.testing.assert_array_equal(load_dataset(path, label="condition", layer="counts").X.toarray(), counts)  # sparse
    raw = load_dataset(path, label="condition", use_raw=True)
    np.testing.assert_array_equal(raw.X, counts)
    assert raw.feature_names[0] == "raw0"  # raw's own var_names
    default = load_dataset(path, label="condition")
    np.testing.assert_array_equal(default.X, np.asarray(adata.X, dtype=np.float64))
    with pytest.raises(InvalidParameterError, match="layer and use_raw=True are two matrices: choose one"):
        load_dataset(path, label="condition", layer="counts", use_raw=True)
    with pytest.raises(InvalidParameterError, match=r"layer 'spliced' is missing; layers are \['counts'\]"):
        load_dataset(path, label="condition", layer="spliced")
    plain = tmp_path / "plain.h5ad"
    _write(plain, sparse=False)
    with pytest.raises(InvalidParameterError, match="use_raw=True, but the AnnData object has no raw"):
        load_dataset(plain, label="condition", use_raw=True)


def test_cli_layer_and_use_raw(tmp_path, capsys):
    path = tmp_path / "layered.h5ad"
    _layered(path)
    tiny = ["--n-target", "5", "--n-estimators", "5", "--m-ensemble", "1,5", "--n-boot", "0", "--quiet"]
    tiny += ["--scheduler", "synchronous", "--label", "condition"]
    assert main(["estimate", "--data", str(path), "--layer", "counts", *tiny]) == 0
    assert main(["estimate", "--data", str(path), "--layer", "counts", "--use-raw", *tiny]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "ensstab: error: --layer and --use-raw are two matrices: choose one (scanpy refuses both too)"
    )


def test_frequencies_are_written_back_to_var_matched_on_names(tmp_path):
    import ensstab_dask as es
    from ensstab_dask.estimates.interop.to_anndata import write_frequencies_to_var

    X, obs, var = _study()
    adata = anndata.AnnData(X=X, obs=obs, var=var)
    subset = adata[:, ::-1][:, : N_VARS // 2].copy()  # some of the genes, in another order
    est = es.estimate(
        np.asarray(subset.X, dtype=np.float64),
        subset.obs["condition"].astype(str).to_numpy(),
        5,
        selector=es.default_selector(10),
        m_ensemble=[1, 5],
        n_boot=0,
        client="synchronous",
        progress=False,
        feature_names=subset.var_names.to_numpy(),
    )
    written = write_frequencies_to_var(adata, est.features)
    B = written[0].removeprefix("ensstab_frequency_m")
    assert written == [f"ensstab_frequency_m{B}", f"ensstab_frequency_m{B}_lower", f"ensstab_frequency_m{B}_upper",
                       "ensstab_mean_rank"]  # fmt: skip
    table = est.features
    names = [str(n) for n in table[next(c for c in ("feature_name", "name") if c in table.coords)].values]
    freq = table["frequency"].values[:, -1]
    for name, f in zip(names, freq):
        assert adata.var.loc[name, written[0]] == f
    absent = [g for g in adata.var_names if g not in names]
    assert len(absent) == N_VARS // 2 and adata.var.loc[absent, written[0]].isna().all()
    assert (adata.var[written[1]].dropna() <= adata.var[written[0]].dropna()).all()
    with pytest.raises(InvalidParameterError, match="already; pass overwrite=True"):
        write_frequencies_to_var(adata, est.features)
    assert write_frequencies_to_var(adata, est.features, overwrite=True) == written
    other = anndata.AnnData(X=X[:, :3], obs=obs, var=pd.DataFrame(index=["a", "b", "c"]))
    with pytest.raises(InvalidParameterError, match="feature names are not var names"):
        write_frequencies_to_var(other, est.features)
    assert "ensstab_mean_rank" not in other.var.columns  # nothing written when refused
