"""The ``ensstab`` command line.

Bad input is reported as one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from ._validation import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    INDICES,
    MODELS,
    RESAMPLES,
    SIMULATOR_MODELS,
)
from ._version import __version__
from .cluster import _LOCAL, SchedulerLost

__all__ = ["main", "parse_values"]


class UsageError(Exception):
    """A problem with the command line itself: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def parse_values(text: str, kind: Callable = int, *, name: str = "value") -> list:
    """Parse ``"1,5,10"`` or an inclusive range ``"start:stop:step"`` (or a mix: ``"1,5:9:2"``)."""
    values: list = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise UsageError(f"{name}: empty item in {text!r}")
        try:
            if ":" in part:
                bits = part.split(":")
                if len(bits) != 3:
                    raise ValueError
                start, stop, step = (kind(b) for b in bits)
                if step <= 0 or stop < start:
                    raise UsageError(f"{name}: range {part!r} needs step > 0 and stop >= start")
                count = int(np.floor((stop - start) / step + 1e-9)) + 1
                values.extend(
                    kind(round(start + k * step, 12)) if kind is float else start + k * step for k in range(count)
                )
            else:
                values.append(kind(part))
        except ValueError:
            what = "integers" if kind is int else "numbers"
            raise UsageError(f"{name}: expected {what} like 1,5,10 or start:stop:step; got {part!r}") from None
    return values


def _add_problem_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n-feature", type=int, default=2000, help="number of features (default 2000)")
    p.add_argument("--n-target", type=int, default=20, help="features each selector keeps (default 20)")
    p.add_argument("--m-stability", type=int, default=50, help="copies used to measure stability (default 50)")
    p.add_argument("--aggregate", default="mean_rank", choices=AGGREGATES)
    p.add_argument("--index", default="jaccard", choices=INDICES)
    p.add_argument("--seed", type=int, default=0)


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="Dask scheduler address (tcp://host:8786 or tls://host:8786), or processes (default), threads, "
        "synchronous",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a scheduler (default 10)")
    tls = p.add_argument_group(
        "TLS",
        "certificates for a tls:// scheduler; without them, the dask configuration's distributed.comm.tls "
        "section is used (a dask config file in ~/.config/dask or $DASK_CONFIG)",
    )
    tls.add_argument(
        "--tls-ca-file", metavar="PEM", help="the CA certificate(s) that signed the cluster's certificates"
    )
    tls.add_argument("--tls-cert", metavar="PEM", help="this client's certificate (may also hold the key)")
    tls.add_argument("--tls-key", metavar="PEM", help="this client's private key")


def _quiet_client_logs() -> None:
    """The CLI reports a lost or unreachable scheduler itself, in one line; distributed's
    client would also log its reconnection attempts with tracebacks. Importing
    distributed sets its loggers' levels, so this runs after that import."""
    import distributed  # noqa: F401

    for name in ("distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _security(args):
    """The ``security`` for ``--scheduler``: from the --tls-* options, else dask's config."""
    import os

    if args.scheduler is not None and args.scheduler not in _LOCAL:
        _quiet_client_logs()
    given = {k: getattr(args, k) for k in ("tls_ca_file", "tls_cert", "tls_key")}
    if not any(given.values()):
        return None  # distributed then builds Security() from the dask config itself
    for name, path in given.items():
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"ensstab: --{name.replace('_', '-')} {path}: no such file")
    if not (args.scheduler or "").startswith("tls://"):
        raise UsageError(f"ensstab: --tls-* options need a tls:// --scheduler address, got {args.scheduler!r}")
    from distributed.security import Security

    # Options not given come from the dask config; cluster.connect says what is missing.
    options = dict(tls_ca_file=given["tls_ca_file"], tls_client_cert=given["tls_cert"], tls_client_key=given["tls_key"])
    return Security(require_encryption=True, **{k: v for k, v in options.items() if v is not None})


def _cmd_simulate(args) -> int:
    from .simulation import simulated_stability

    m_values = parse_values(args.m_ensemble, int, name="--m-ensemble")
    start = time.perf_counter()
    curve = {
        m: simulated_stability(
            args.n_feature,
            args.n_target,
            args.n_useful,
            args.p,
            m_ensemble=m,
            m_stability=args.m_stability,
            aggregate=args.aggregate,
            index=args.index,
            seed=args.seed,
            model=args.model,
            h=args.h,
        )
        for m in m_values
    }
    seconds = time.perf_counter() - start
    print(
        f"simulated {args.index} stability of {args.aggregate} ensembles: n_feature={args.n_feature} "
        f"n_target={args.n_target} n_useful={args.n_useful} p={args.p} m_stability={args.m_stability} seed={args.seed}"
        + (f" model={args.model} h={args.h}" if args.model != "onda" else "")
    )
    print(f"{'m_ensemble':>10}  stability")
    for m, s in curve.items():
        print(f"{m:>10}  {s:.4f}")
    print(f"({seconds:.2f} s)")
    if args.json:
        keys = ("n_feature", "n_target", "n_useful", "p", "m_stability", "aggregate", "index", "seed", "model", "h")
        payload = {k: getattr(args, k) for k in keys}
        payload.update(curve={str(m): s for m, s in curve.items()}, seconds=seconds, version=__version__)
        from .storage import write_json

        write_json(payload, args.json)
    return 0


def _cmd_sweep(args) -> int:
    import os

    from .sweep import sweep

    if args.output and os.path.exists(args.output) and not args.overwrite:
        raise UsageError(f"ensstab sweep: --output {args.output} exists; pass --overwrite to replace it")
    ds = sweep(
        args.n_feature,
        args.n_target,
        n_useful=parse_values(args.n_useful, int, name="--n-useful"),
        p=parse_values(args.p, float, name="--p"),
        m_ensemble=parse_values(args.m_ensemble, int, name="--m-ensemble"),
        m_stability=args.m_stability,
        n_runs=args.n_runs,
        repeats=args.repeats,
        aggregate=args.aggregate,
        index=args.index,
        seed=args.seed,
        store=args.store,
        client=args.scheduler,
        batch_size=args.batch_size,
        progress=not args.no_progress,
        timeout=args.timeout,
        security=_security(args),
        model=args.model,
        h=args.h,
    )
    if args.output:
        from .storage import write_netcdf

        write_netcdf(ds, args.output, overwrite=args.overwrite)
    sizes = ", ".join(f"{d}: {n}" for d, n in ds.sizes.items() if d != "repeat")
    print(
        f"sweep done ({sizes})"
        + (f"; store {args.store}" if args.store else "")
        + (f"; wrote {args.output}" if args.output else "")
    )
    if not args.store and not args.output:
        print(ds["stability"].to_dataframe().drop(columns="n_runs", errors="ignore").to_string())
    return 0


def _cmd_export(args) -> int:
    from .storage import export_netcdf

    out = export_netcdf(args.store, args.out, overwrite=args.overwrite, allow_incomplete=args.allow_incomplete)
    print(f"wrote {out}")
    return 0


def _cmd_verify(args) -> int:
    from .storage import StoreDamaged, SweepStore

    store = SweepStore(args.store)
    if not store.path.exists():
        raise UsageError(f"ensstab verify: {args.store}: no such store")
    try:
        store.settings()
        problems = store.provenance_problems()
        damaged = int(store.damaged().sum())
    except StoreDamaged as exc:
        print(f"ensstab verify: {exc}", file=sys.stderr)
        return 1
    done = store.completed()
    for p in problems:
        print(f"{args.store}: edited since it was made: {p}")
    if damaged:
        print(f"{args.store}: {damaged} cells are marked done but hold no data; rerun the sweep to recompute them")
    verdict = "damaged" if problems or damaged else "ok"
    print(f"{args.store}: {verdict}; {int(done.sum())} of {done.size} cells done")
    return 1 if verdict == "damaged" else 0


SELECTORS = ("rf", "extra-trees", "logistic")


def _selector(name: str, n_estimators: int):
    if name == "rf":
        from .selectors import default_selector

        return default_selector(n_estimators)
    if name == "extra-trees":
        from sklearn.ensemble import ExtraTreesClassifier

        return ExtraTreesClassifier(n_estimators=n_estimators, max_features="sqrt", n_jobs=1)
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=2000)


def _resample(text: str, option: str):
    if text in RESAMPLES:
        return text
    try:
        return float(text)
    except ValueError:
        raise UsageError(
            f"ensstab: {option} must be one of {', '.join(RESAMPLES)} or a fraction in (0, 1]; got {text!r}"
        ) from None


def _check_outputs(args, command: str) -> None:
    import os

    # Checked before any work, so that nothing computed is lost to a bad path at the end.
    for option, path in (("--json", args.json), ("--output", args.output)):
        if not path:
            continue
        if os.path.exists(path) and not args.overwrite:
            raise UsageError(f"ensstab {command}: {path} exists; pass --overwrite to replace it")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"ensstab {command}: {option} {path}: directory {folder} does not exist")


def _load(args):
    """The data of --data (or the embedded default) and a description of where they came from."""
    from .datasets import load_dataset, make_microarray

    if args.data:
        label = int(args.label) if args.label is not None and args.label.lstrip("-").isdigit() else args.label
        return load_dataset(args.data, label=label), args.data
    data = make_microarray(seed=0)
    return data, "embedded default (make_microarray(seed=0): 62 samples, 2000 features, 40 informative)"


def _estimate_options(args) -> dict:
    """The keywords of estimate() that the estimate's options give (shared by estimate and validate)."""
    if args.n_boot < 0 or 0 < args.n_boot < 20:
        raise UsageError(f"ensstab: --n-boot must be 0 (no bootstrap) or at least 20; got {args.n_boot}")
    if not 0 < args.confidence < 1:
        raise UsageError(f"ensstab: --confidence must be in (0, 1), like 0.95; got {args.confidence}")
    return dict(
        selector=_selector(args.selector, args.n_estimators),
        m_ensemble=parse_values(args.m_ensemble, int, name="--m-ensemble"),
        m_stability=args.m_stability,
        n_runs=args.n_runs,
        repeats=args.repeats,
        p_method=args.p_method,
        verify=not args.no_verify,
        calibrate=args.calibrate,
        calibration_layout=args.calibration_layout,
        member_resample=_resample(args.member_resample, "--member-resample"),
        n_boot=args.n_boot,
        confidence=args.confidence,
        aggregate=args.aggregate,
        index=args.index,
        resample=_resample(args.resample, "--resample"),
        seed=args.seed,
        model=args.model,
    )


def _write(args, payload: dict, ds) -> None:
    if args.json:
        from .storage import write_json

        write_json(payload, args.json)
    if args.output:
        from .storage import write_netcdf

        write_netcdf(ds, args.output, overwrite=args.overwrite)


def _cmd_estimate(args) -> int:
    from .algorithm import estimate
    from .naive import real_ensemble_stability

    _check_outputs(args, "estimate")
    data, source = _load(args)
    options = _estimate_options(args)
    security = _security(args)
    if args.validate and options["resample"] != "half":
        print(
            "ensstab: note: --resample applies to the estimate's runs; the naive check keeps the method's layout "
            "(each copy a random half, its members bootstrap samples of it)",
            file=sys.stderr,
        )
    print(f"data: {source}; X {data.X.shape[0]} x {data.X.shape[1]}")
    with warnings.catch_warnings():
        # The summary prints every guard rail above the curve; no second copy on stderr.
        warnings.simplefilter("ignore", RuntimeWarning)
        est = estimate(
            data.X, data.y, args.n_target, client=args.scheduler, timeout=args.timeout, security=security, **options
        )
    print(est.summary())
    payload = est.to_dict()
    payload["data"] = source
    if data.informative is not None:
        counts = est.selection_counts
        t = est.t_uniform
        payload["informative_features"] = int(len(data.informative))
        payload["useful_that_are_informative"] = int(np.isin(np.flatnonzero(counts > t), data.informative).sum())
        print(
            f"  known informative features: {len(data.informative)}; of the features above t_uniform, "
            f"{payload['useful_that_are_informative']} are informative"
        )
    real = None
    if args.validate:
        real = real_ensemble_stability(
            data.X,
            data.y,
            args.n_target,
            m_ensemble=options["m_ensemble"],
            m_stability=args.m_stability,
            selector=options["selector"],
            aggregate=args.aggregate,
            index=args.index,
            seed=args.seed,
            client=args.scheduler,
            timeout=args.timeout,
            security=security,
        )
        payload["validation"] = {
            "curve": {str(int(m)): float(v) for m, v in zip(real["m_ensemble"].values, real["stability"].values)},
            "real_runs": int(real.attrs["real_runs"]),
            "seconds": float(real.attrs["seconds"]),
        }
        print("  naive real check (real runs: %d, %.1f s):" % (real.attrs["real_runs"], real.attrs["seconds"]))
        for m, v in payload["validation"]["curve"].items():
            pred = payload["curve"][m] if payload["curve"] else None
            shown = "n/a" if pred is None else f"{pred:.4f}"
            print(f"    m_ensemble={int(m):>4}  real {v:.4f}  predicted {shown}")
    ds = est.to_dataset(real)
    ds.attrs["data"] = source
    _write(args, payload, ds)
    return 0


def _default_cache_dir() -> str:
    import os

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ensstab_dask", "naive")


def _cmd_validate(args) -> int:
    import os

    from .validation import validate

    _check_outputs(args, "validate")
    cache_dir = args.cache_dir
    if cache_dir is None:
        cache_dir = _default_cache_dir()
        os.makedirs(cache_dir, exist_ok=True)
    elif not os.path.isdir(cache_dir):
        raise UsageError(f"ensstab validate: --cache-dir {cache_dir}: no such directory")
    data, source = _load(args)
    options = _estimate_options(args)
    print(f"data: {source}; X {data.X.shape[0]} x {data.X.shape[1]}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = validate(
            data.X,
            data.y,
            args.n_target,
            cache_dir=cache_dir,
            client=args.scheduler,
            timeout=args.timeout,
            security=_security(args),
            data=source,
            **options,
        )
    print(res.summary())
    ds = res.to_dataset()
    ds.attrs["data"] = source
    _write(args, res.to_dict(), ds)
    return 0


def _cmd_report(args) -> int:
    from .report import write_report

    index = write_report(
        args.result,
        args.output,
        overwrite=args.overwrite,
        real_stability=args.real_stability,
        n_useful=args.n_useful,
        n_runs=args.n_runs,
    )
    pictures = sorted(p.name for p in index.parent.glob("*.png"))
    print(f"wrote {index} with {len(pictures)} pictures: {', '.join(pictures)}")
    return 0


def _add_estimate_options(est: argparse.ArgumentParser, *, m_stability: int) -> None:
    """The estimate's options, shared by ``estimate`` and ``validate``."""
    est.add_argument(
        "--data", metavar="PATH", help=".mat (scikit-feature), .npz or .csv; default: the embedded default"
    )
    est.add_argument("--label", default=None, help="CSV label column (name or index)")
    est.add_argument("--n-target", type=int, default=20, help="features each selector keeps (default 20)")
    est.add_argument("--n-runs", type=int, default=None, help="runs behind n_useful (default: largest m_ensemble)")
    est.add_argument(
        "--m-stability", type=int, default=m_stability, help=f"copies behind each stability (default {m_stability})"
    )
    est.add_argument(
        "--m-ensemble", default="1,5,10,20,30,50", help="ensemble sizes to predict (default 1,5,10,20,30,50)"
    )
    est.add_argument("--repeats", type=int, default=20, help="draws of each estimated quantity (default 20)")
    est.add_argument("--selector", default="rf", choices=SELECTORS, help="base selector (default rf: random forest)")
    est.add_argument("--n-estimators", type=int, default=300, help="trees for rf and extra-trees (default 300)")
    est.add_argument(
        "--p-method", default="bisect", choices=("bisect", "grid"), help="how p is fitted (default bisect)"
    )
    est.add_argument(
        "--resample",
        default="half",
        help="resample of the runs behind n_useful (and p with --calibration-layout paper): half (default), "
        "bootstrap, bagging (a bootstrap sample of a random half), or a fraction like 0.7",
    )
    est.add_argument(
        "--calibration-layout",
        default=DEFAULT_CALIBRATION_LAYOUT,
        choices=CALIBRATION_LAYOUTS,
        help="which runs calibrate the simulator: paper (every run on --resample, the paper's method), ensemble "
        "(p on runs in the ensemble's weak-selector layout, n_useful on --resample runs), ensemble-all (both in the "
        f"weak-selector layout); default {DEFAULT_CALIBRATION_LAYOUT}",
    )
    est.add_argument(
        "--model",
        default="onda",
        choices=MODELS,
        help="the model behind the curve: onda (the paper's simulator, default); two-level (each ensemble copy draws "
        "its weak selectors' S_m from its own set of h features, h fitted to 20 more real runs; "
        "docs/two_level_model.md); random-effects (a model of the real ranks fitted to 100 more real runs, 10 "
        "ensemble copies of 10; docs/random_effects_model.md)",
    )
    est.add_argument(
        "--member-resample",
        default="bagging",
        help="how the ensemble's weak selectors see the data, for the ensemble layouts: bagging (default: a bootstrap "
        "sample of a random half, as in the naive check), or any --resample value",
    )
    est.add_argument(
        "--n-boot",
        type=int,
        default=200,
        help="bootstrap replicates of the real runs behind every interval; 0 turns the bootstrap off (default 200)",
    )
    est.add_argument("--confidence", type=float, default=0.95, help="level of the percentile intervals (default 0.95)")
    est.add_argument("--aggregate", default="mean_rank", choices=AGGREGATES, help="ensemble rank aggregation")
    est.add_argument("--index", default="jaccard", choices=INDICES, help="stability index")
    est.add_argument("--no-verify", action="store_true", help="skip the fixed-point check u = A[f_(u,p)]")
    est.add_argument("--calibrate", action="store_true", help="also intersect the two surfaces over a (u, p) grid")
    est.add_argument("--seed", type=int, default=0, help="seed of every random stream (default 0)")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    p.add_argument("--output", metavar="OUT.nc", help="write the curve and results to netCDF")
    p.add_argument("--overwrite", action="store_true", help="replace existing --json/--output files")


def _close_interrupted_clusters() -> None:
    """Close what a Ctrl-C left half-started, quietly.

    Interrupted while its workers start, a LocalCluster stays registered with
    distributed's exit hook, which then fails to close it (``AssertionError:
    Status.init``) and prints a traceback after our one line. Close such clusters here,
    swallowing that failure, and drop the hook: nothing is left for it to do.
    """
    import atexit

    spec = sys.modules.get("distributed.deploy.spec")
    if spec is None:
        return
    for cluster in list(spec.SpecCluster._instances):
        try:
            cluster.close(timeout=10)
        except (Exception, KeyboardInterrupt):  # noqa: BLE001 - best effort on the way out
            pass
    atexit.unregister(spec.close_clusters)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default="onda",
        choices=SIMULATOR_MODELS,
        help="the simulator: onda (the paper's, default) or two-level (docs/two_level_model.md)",
    )
    p.add_argument(
        "--h",
        type=int,
        default=None,
        help="two-level model only: size of each ensemble copy's preferred set, n_target <= h <= n_useful",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ensstab", description="Estimate the stability of ensemble feature selectors.")
    parser.add_argument("--version", action="version", version=f"ensstab_dask {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    sim = sub.add_parser("simulate", help="print the simulated stability curve over ensemble sizes")
    _add_problem_options(sim)
    sim.add_argument("--n-useful", type=int, default=60, help="size of S' (default 60)")
    sim.add_argument("--p", type=float, default=0.7, help="probability of picking from S_m (default 0.7)")
    sim.add_argument("--m-ensemble", default="1,5,10,20,30,50", help="ensemble sizes, list or start:stop:step")
    sim.add_argument("--json", metavar="OUT.json", help="also write the curve as JSON")
    _add_model_options(sim)
    sim.set_defaults(func=_cmd_simulate)

    sw = sub.add_parser("sweep", help="simulated stability and n_useful_v over a (n_useful, p, m_ensemble) grid")
    _add_problem_options(sw)
    sw.add_argument("--n-useful", required=True, help="grid of n_useful, e.g. 20:810:10 or 20,40,80")
    sw.add_argument("--p", required=True, help="grid of p, e.g. 0.01:1.0:0.01")
    sw.add_argument("--m-ensemble", default="1", help="grid of ensemble sizes, e.g. 1,5,10,30 (default 1)")
    sw.add_argument("--n-runs", type=int, default=None, help="runs behind each n_useful_v (default: m_ensemble)")
    sw.add_argument("--repeats", type=int, default=10, help="independent draws per cell (default 10)")
    sw.add_argument("--store", metavar="PATH.zarr", help="zarr store: written as blocks finish, resumed on rerun")
    sw.add_argument("--output", metavar="OUT.nc", help="also write the finished sweep to netCDF")
    sw.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    _add_cluster_options(sw)
    sw.add_argument("--batch-size", type=int, default=None, help="cells per task (default: about 0.5 s of work)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_model_options(sw)
    sw.set_defaults(func=_cmd_sweep)

    est = sub.add_parser("estimate", help="predict the stability of ensembles of a real selector (Algorithm 1)")
    _add_estimate_options(est, m_stability=30)
    est.add_argument(
        "--validate", action="store_true", help="also run the naive real check, m_stability x m_ensemble runs"
    )
    _add_cluster_options(est)
    _add_output_options(est)
    est.set_defaults(func=_cmd_estimate)

    val = sub.add_parser(
        "validate",
        help="the estimate against the naive real check, per ensemble size (the validation harness)",
        description="Run the estimate and the naive check (bagging layout) on the same data and cluster, and print "
        "per m_ensemble: predicted [interval], real +- SE, z, covered. The naive curve is cached as netCDF in "
        "--cache-dir, so a rerun with the same data and settings reuses it.",
    )
    _add_estimate_options(val, m_stability=20)
    val.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="where naive curves are cached (default $XDG_CACHE_HOME/ensstab_dask/naive, "
        "else ~/.cache/ensstab_dask/naive)",
    )
    _add_cluster_options(val)
    _add_output_options(val)
    val.set_defaults(func=_cmd_validate)

    rep = sub.add_parser("report", help="pictures and a self-contained index.html of an estimate or a sweep")
    rep.add_argument("result", metavar="RESULT.nc", help="from ensstab estimate --output, or a sweep")
    rep.add_argument("-o", "--output", metavar="DIR", required=True, help="directory to write (PNG files, index.html)")
    rep.add_argument("--overwrite", action="store_true", help="replace an existing, non-empty DIR")
    rep.add_argument("--real-stability", type=float, help="sweeps: the observed single-selector stability")
    rep.add_argument("--n-useful", type=float, help="sweeps: the observed n_useful")
    rep.add_argument("--n-runs", type=int, help="sweeps: the runs behind the observed n_useful")
    rep.set_defaults(func=_cmd_report)

    ver = sub.add_parser(
        "verify", help="check a sweep store: its metadata against its record, and data behind every done cell"
    )
    ver.add_argument("store", metavar="STORE")
    ver.set_defaults(func=_cmd_verify)

    ex = sub.add_parser("export", help="write a finished sweep store to netCDF")
    ex.add_argument("store", metavar="STORE")
    ex.add_argument("out", metavar="OUT.nc")
    ex.add_argument("--overwrite", action="store_true", help="replace an existing OUT.nc")
    ex.add_argument("--allow-incomplete", action="store_true", help="export even if some cells are not computed yet")
    ex.set_defaults(func=_cmd_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return args.func(args)
    except SchedulerLost as exc:  # before OSError: it is a ConnectionError
        hint = "; rerun the same command to resume from the store" if getattr(args, "store", None) else ""
        print(f"ensstab: error: {exc}{hint}", file=sys.stderr)
        return 1
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except (ConnectionError, ImportError) as exc:
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("ensstab: error: out of memory; lower m_ensemble, m_stability, n_runs or the grid", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # netCDF4 reports a full disk as RuntimeError("NetCDF: HDF error")
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _close_interrupted_clusters()
        print(
            "ensstab: interrupted; finished blocks are in the store, rerun the same command to resume", file=sys.stderr
        )
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
