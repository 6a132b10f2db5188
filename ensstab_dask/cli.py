"""The ``ensstab`` command line.

Bad input is reported as one line on stderr, ``ensstab: error: ...``, in the command
line's words (``--n-target``, not the library's ``n_target``), with exit status 2, never
a traceback. Ctrl-C (to this process alone, or to its whole process group, as a
terminal sends it) ends any command with one line, ``ensstab: interrupted``, and exit
status 130. The library's log messages of level INFO and above (logger
``ensstab_dask``: a sweep's resume note and its task count, the dashboard link) go to
stderr, one line each, as plain lines; ``--quiet`` keeps only warnings.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ._validation import (
    AGGREGATES,
    CALIBRATION_LAYOUTS,
    DEFAULT_CALIBRATION_LAYOUT,
    DEFAULT_MODEL,
    INDICES,
    MODELS,
    RESAMPLES,
    SIMULATOR_MODELS,
)
from ._version import __version__
from .cluster import SchedulerLost, _local_kind, check_address

__all__ = ["main", "parse_values"]


class UsageError(Exception):
    """A problem with the command line itself: reported in one line, exit status 2."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default at the end of its help, and the epilogs' examples kept as written.

    Not for flags (their default is "off") nor options without one (None), which would
    read "(default: None)"; nor where the help already says what the default is.
    """

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):  # command lines: one per line, not wrapped into a paragraph
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, no usage dump
        raise UsageError(message)


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


def _add_shared_options(p: argparse.ArgumentParser) -> None:
    """The options every command that simulates ensembles has."""
    p.add_argument(
        "--aggregate",
        default="mean_rank",
        choices=AGGREGATES,
        help="how an ensemble combines its weak selectors' rankings: by mean or median rank, by vote (how often "
        "each feature is in a member's top n_target) or by reciprocal rank; ties are broken at random",
    )
    p.add_argument(
        "--index", default="jaccard", choices=INDICES, help="the stability index computed over the selected subsets"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random stream, 0 <= seed < 2**63: the same seed and settings give the same result",
    )


def _add_problem_options(p: argparse.ArgumentParser) -> None:
    # Defaults are the library's (simulated_stability, sweep): tests/test_cli.py checks them.
    p.add_argument("--n-feature", type=int, default=2000, help="number of features")
    p.add_argument("--n-target", type=int, default=20, help="features each selector keeps")
    p.add_argument("--m-stability", type=int, default=50, help="ensemble copies behind each stability value")
    _add_shared_options(p)


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="Dask scheduler address (tcp://host:8786 or tls://host:8786), or processes (the default: one worker "
        "process per core), threads, synchronous",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a scheduler")
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


def _add_quiet(p: argparse.ArgumentParser, *aliases: str) -> None:
    p.add_argument(
        "-q",
        "--quiet",
        *aliases,
        dest="quiet",
        action="store_true",
        help="no progress bars and no progress notes (dashboard link, resume note): warnings and errors only",
    )


def _quiet_client_logs() -> None:
    """The CLI reports a lost or unreachable scheduler itself, in one line; distributed's
    client would also log its reconnection attempts with tracebacks. Importing
    distributed sets its loggers' levels, so this runs after that import."""
    import distributed  # noqa: F401

    for name in ("distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _cluster_options(args) -> dict:
    """The ``client``, ``timeout`` and ``security`` keywords of the library's calls, from
    --scheduler, --timeout and the --tls-* options, checked before any work."""
    if args.scheduler is not None and _local_kind(args.scheduler) is None:
        if ":" not in args.scheduler:  # neither a name nor an address; the library's message names its API
            raise UsageError(
                "--scheduler must be processes, threads, synchronous or a scheduler address like tcp://host:8786; "
                f"got {args.scheduler!r}"
            )
        check_address(args.scheduler)  # a malformed one fails now, not once the work is planned
        _quiet_client_logs()
    return dict(client=args.scheduler, timeout=args.timeout, security=_security(args))


def _security(args):
    """The ``security`` for ``--scheduler``: from the --tls-* options, else dask's config."""
    import os

    given = {k: getattr(args, k) for k in ("tls_ca_file", "tls_cert", "tls_key")}
    if not any(given.values()):
        return None  # distributed then builds Security() from the dask config itself
    for name, path in given.items():
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"--{name.replace('_', '-')} {path}: no such file")
    if not (args.scheduler or "").startswith("tls://"):
        raise UsageError(f"--tls-* options need a tls:// --scheduler address, got {args.scheduler!r}")
    from distributed.security import Security

    # Options not given come from the dask config; cluster.connect says what is missing.
    options = dict(tls_ca_file=given["tls_ca_file"], tls_client_cert=given["tls_cert"], tls_client_key=given["tls_key"])
    return Security(require_encryption=True, **{k: v for k, v in options.items() if v is not None})


def _check_model(args) -> None:
    """--model and --h together, in the command line's words (the library names h=, model=)."""
    if args.h is not None and args.model != "two-level":
        raise UsageError(f"--h is an option of --model two-level only; got --h {args.h} with --model {args.model}")
    if args.model == "two-level" and args.h is None:
        raise UsageError("--model two-level needs --h, the size of each ensemble copy's preferred set")


def _cmd_simulate(args) -> int:
    from .simulation import simulated_stability

    _check_model(args)
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

    from ._sweep import sweep

    _check_model(args)
    if args.output and os.path.exists(args.output) and not args.overwrite:
        raise UsageError(f"--output {args.output} exists; pass --overwrite to replace it")
    if args.store:
        # Checked here, before a cluster is started for the store's template.
        folder = os.path.dirname(os.path.abspath(args.store))
        if not os.path.isdir(folder):
            raise UsageError(f"--store {args.store}: directory {folder} does not exist")
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
        batch_size=args.batch_size,
        progress=not args.quiet,
        model=args.model,
        h=args.h,
        **_cluster_options(args),
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
        raise UsageError(f"{args.store}: no such store")
    try:
        store.settings()
        problems = store.provenance_problems()
        damaged = int(store.damaged().sum())
    except StoreDamaged as exc:
        print(f"ensstab: error: {exc}", file=sys.stderr)
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
            f"{option} must be one of {', '.join(RESAMPLES)} or a fraction in (0, 1]; got {text!r}"
        ) from None


def _check_outputs(args) -> None:
    import os

    # Checked before any work, so that nothing computed is lost to a bad path at the end.
    for option, path in (("--json", args.json), ("--output", args.output)):
        if not path:
            continue
        if os.path.exists(path) and not args.overwrite:
            raise UsageError(f"{option} {path} exists; pass --overwrite to replace it")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{option} {path}: directory {folder} does not exist")


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
        raise UsageError(f"--n-boot must be 0 (no bootstrap) or at least 20; got {args.n_boot}")
    if not 0 < args.confidence < 1:
        raise UsageError(f"--confidence must be in (0, 1), like 0.95; got {args.confidence}")
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

    _check_outputs(args)
    cluster = _cluster_options(args)
    data, source = _load(args)
    options = _estimate_options(args)
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
        est = estimate(data.X, data.y, args.n_target, progress=not args.quiet, **cluster, **options)
    print(est.summary())
    payload = est.to_dict()
    payload["data"] = source
    if data.informative is not None and est.selection_counts is not None:
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
            progress=not args.quiet,
            **cluster,
        )
        payload["validation"] = {
            "curve": {str(int(m)): float(v) for m, v in zip(real["m_ensemble"].values, real["stability"].values)},
            "real_runs": int(real.attrs["real_runs"]),
            "seconds": float(real.attrs["seconds"]),
        }
        from .validation import Validation, compare

        # The same per-m comparison (real +- SE, verdict) as `ensstab validate` prints.
        seconds = {"estimate": sum(est.seconds.values()), "naive": float(real.attrs["seconds"])}
        val = Validation(est, real, compare(est, real), seconds)
        payload["validation"]["per_m"] = val.to_dict()["per_m"]
        print()
        print(val.comparison())
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

    _check_outputs(args)
    cluster = _cluster_options(args)
    cache_dir = args.cache_dir
    if cache_dir is None:
        cache_dir = _default_cache_dir()
        os.makedirs(cache_dir, exist_ok=True)
    elif not os.path.isdir(cache_dir):
        raise UsageError(f"--cache-dir {cache_dir}: no such directory")
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
            data=source,
            progress=not args.quiet,
            **cluster,
            **options,
        )
    print(res.summary())
    ds = res.to_dataset()
    ds.attrs["data"] = source
    _write(args, res.to_dict(), ds)
    return 0


_REPORT_READS = (
    "report reads a netCDF file (from estimate, validate or sweep --output, or from export) or a sweep store "
    "(the .zarr directory of sweep --store)"
)


def _report_input(text: str):
    """The Dataset behind ``ensstab report RESULT``: a netCDF file, or a sweep store read
    as the sweep it holds (cells not computed yet are NaN, as in ``export --allow-incomplete``)."""
    from pathlib import Path

    import xarray as xr

    from .storage import StoreDamaged, SweepStore

    path = Path(text)
    if path.is_dir():
        store = SweepStore(path)
        try:
            store.settings()  # the record every sweep store has
        except StoreDamaged:
            raise
        except ValueError:
            raise UsageError(f"{path} is a directory but not a sweep store; {_REPORT_READS}") from None
        return store.load()
    if not path.exists():
        raise UsageError(f"{path}: no such file; {_REPORT_READS}")
    try:
        with xr.open_dataset(path) as opened:
            return opened.load()
    except (OSError, ValueError):  # xarray's own message lists its engines over several lines
        raise UsageError(f"{path} is not a netCDF file; {_REPORT_READS}") from None


def _cmd_report(args) -> int:
    from .report import write_report

    index = write_report(
        _report_input(args.result),
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
    """The estimate's options, shared by ``estimate`` and ``validate``; ``m_stability`` is
    the default of the library function behind the command."""
    est.add_argument(
        "--data", metavar="PATH", help=".mat (scikit-feature), .npz or .csv; default: the embedded default"
    )
    est.add_argument("--label", default=None, help="CSV label column (name or index)")
    est.add_argument("--n-target", type=int, default=20, help="features each selector keeps")
    est.add_argument("--n-runs", type=int, default=None, help="runs behind n_useful (default: largest m_ensemble)")
    est.add_argument("--m-stability", type=int, default=m_stability, help="ensemble copies behind each stability")
    est.add_argument(
        "--m-ensemble",
        default="1,5,10,20,30,50",
        help="ensemble sizes to predict: a list, or an inclusive range start:stop:step",
    )
    est.add_argument("--repeats", type=int, default=20, help="draws of each estimated quantity")
    est.add_argument("--selector", default="rf", choices=SELECTORS, help="base selector (rf: random forest)")
    est.add_argument("--n-estimators", type=int, default=300, help="trees for rf and extra-trees")
    est.add_argument(
        "--p-method",
        default="bisect",
        choices=("bisect", "grid"),
        help="how p is fitted to the real selector's stability: bisect (bisection on the simulated stability, which "
        "rises with p) or grid (the closest of p = n_target/n_feature and the multiples of 0.01 above it)",
    )
    est.add_argument(
        "--resample",
        default="half",
        help="resample of the runs behind n_useful (and p with --calibration-layout paper): half, bootstrap, "
        "bagging (a bootstrap sample of a random half), or a fraction like 0.7",
    )
    est.add_argument(
        "--calibration-layout",
        default=DEFAULT_CALIBRATION_LAYOUT,
        choices=CALIBRATION_LAYOUTS,
        help="which runs calibrate the simulator: paper (every run on --resample, the paper's method), ensemble "
        "(p on runs in the ensemble's weak-selector layout, n_useful on --resample runs), ensemble-all (both in the "
        "weak-selector layout)",
    )
    est.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        choices=MODELS,
        help="the model behind the curve: anchored (measured on 10 real ensemble copies of 20 weak selectors, "
        "200 real runs, extrapolated beyond 20; docs/anchored_model.md); onda (the paper's simulator, 40 more "
        "real runs for its self-check); two-level (each ensemble copy draws its weak selectors' S_m from its own "
        "set of h features, h fitted to 20 more real runs; docs/two_level_model.md); random-effects (a model of "
        "the real ranks fitted to 100 more real runs, 10 ensemble copies of 10; docs/random_effects_model.md)",
    )
    est.add_argument(
        "--member-resample",
        default="bagging",
        help="how the ensemble's weak selectors see the data, for the ensemble layouts: bagging (a bootstrap "
        "sample of a random half, as in the naive check), or any --resample value",
    )
    est.add_argument(
        "--n-boot",
        type=int,
        default=200,
        help="bootstrap replicates of the real runs behind every interval; 0 turns the bootstrap off",
    )
    est.add_argument("--confidence", type=float, default=0.95, help="level of the percentile intervals")
    _add_shared_options(est)
    est.add_argument("--no-verify", action="store_true", help="skip the fixed-point check u = A[f_(u,p)]")
    est.add_argument("--calibrate", action="store_true", help="also intersect the two surfaces over a (u, p) grid")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    p.add_argument("--output", metavar="OUT.nc", help="write the curve and results to netCDF")
    p.add_argument("--overwrite", action="store_true", help="replace existing --json/--output files")


def _close_interrupted_clusters() -> None:
    """Close what a Ctrl-C left half-started, quietly.

    Interrupted while its workers start, a LocalCluster stays registered with
    distributed's exit hook, which then fails to close it (``AssertionError:
    Status.init``) and prints a traceback after our one line. The package's local
    clusters hold a Ctrl-C back until they are up (:func:`ensstab_dask.cluster.local_cluster`),
    so this is the fallback for one started otherwise. Close such clusters here,
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
        help="the simulator: onda (the paper's) or two-level (docs/two_level_model.md)",
    )
    p.add_argument(
        "--h",
        type=int,
        default=None,
        help="--model two-level only: size of each ensemble copy's preferred set, n_target <= h <= n_useful",
    )


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ensstab",
        description="Estimate the stability of ensemble feature selectors (the fast estimation method of Onda et "
        "al.), on Dask. Each command has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"ensstab_dask {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    sim = sub.add_parser(
        "simulate",
        help="print the simulated stability curve over ensemble sizes",
        description="Print the stability of ensembles of the simulated weak selector (n_useful, p) for each "
        "ensemble size, computed in this process.",
    )
    _add_problem_options(sim)
    sim.add_argument("--n-useful", type=int, default=60, help="size of S', the simulated useful features")
    sim.add_argument("--p", type=float, default=0.7, help="probability of picking the next feature from S_m")
    sim.add_argument(
        "--m-ensemble", default="1,5,10,20,30,50", help="ensemble sizes: a list, or an inclusive range start:stop:step"
    )
    sim.add_argument("--json", metavar="OUT.json", help="also write the curve as JSON")
    _add_model_options(sim)
    sim.set_defaults(func=_cmd_simulate)

    sw = sub.add_parser(
        "sweep",
        help="simulated stability and n_useful_v over a (n_useful, p, m_ensemble) grid",
        description="Map the simulator's two surfaces over a (n_useful, p, m_ensemble) grid, on a Dask cluster: "
        "the simulated ensemble stability and n_useful_v = A[f_(u,p)], each cell from --repeats independent draws. "
        "With --store, every finished block is kept in a zarr store, and the same command run again resumes it.",
        epilog=_examples(
            "ensstab sweep --n-useful 20:810:10 --p 0.01:1.0:0.01 --m-ensemble 1,5,10,30 --store sweep.zarr",
            "ensstab export sweep.zarr sweep.nc       # once the sweep is done",
            "ensstab sweep --n-useful 20,40 --p 0.5,0.7 --scheduler tcp://10.0.0.5:8786 --output small.nc",
        ),
    )
    _add_problem_options(sw)
    sw.add_argument(
        "--n-useful", required=True, help="grid of n_useful: a list like 20,40,80 or a range like 20:810:10"
    )
    sw.add_argument("--p", required=True, help="grid of p: a list like 0.3,0.6 or a range like 0.01:1.0:0.01")
    sw.add_argument("--m-ensemble", default="1", help="grid of ensemble sizes, like 1,5,10,30")
    sw.add_argument("--n-runs", type=int, default=None, help="runs behind each n_useful_v (default: m_ensemble)")
    sw.add_argument("--repeats", type=int, default=10, help="independent draws per cell")
    sw.add_argument("--store", metavar="PATH.zarr", help="zarr store: written as blocks finish, resumed on rerun")
    sw.add_argument("--output", metavar="OUT.nc", help="also write the finished sweep to netCDF")
    sw.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    _add_cluster_options(sw)
    _add_quiet(sw, "--no-progress")  # the sweep's name for it before the other commands had one
    sw.add_argument("--batch-size", type=int, default=None, help="cells per task (default: about 0.5 s of work)")
    _add_model_options(sw)
    sw.set_defaults(func=_cmd_sweep)

    est = sub.add_parser(
        "estimate",
        help="predict the stability of ensembles of a real selector (Algorithm 1)",
        description="Predict the stability of ensembles of a real feature selector from a few real runs (Algorithm "
        "1 of Onda et al.): the simulator's n_useful and p are fitted to --n-runs + --m-stability real runs, and the "
        "ensembles are simulated. Every number comes with a bootstrap interval, and the summary starts with a "
        "verdict on whether to believe it.",
        epilog=_examples(
            "ensstab estimate                          # the embedded default study (no download)",
            "ensstab estimate --data colon.mat --n-target 20 --json colon.json",
            "ensstab estimate --data study.csv --label class --scheduler tcp://10.0.0.5:8786 --quiet",
        ),
    )
    _add_estimate_options(est, m_stability=50)  # algorithm.estimate's default
    est.add_argument(
        "--validate", action="store_true", help="also run the naive real check, m_stability x m_ensemble runs"
    )
    _add_cluster_options(est)
    _add_quiet(est)
    _add_output_options(est)
    est.set_defaults(func=_cmd_estimate)

    val = sub.add_parser(
        "validate",
        help="the estimate against the naive real check, per ensemble size (the validation harness)",
        description="Run the estimate and the naive check (bagging layout) on the same data and cluster, and print "
        "per m_ensemble: predicted [interval], real +- SE, z, covered. The naive curve is cached as netCDF in "
        "--cache-dir, so a rerun with the same data and settings reuses it.",
        epilog=_examples(
            "ensstab validate                          # the embedded default; the naive check takes minutes",
            "ensstab validate --data colon.mat --n-target 20 --json colon-validation.json",
            "ensstab validate --calibrate --output validation.nc && ensstab report validation.nc -o report/",
        ),
    )
    _add_estimate_options(val, m_stability=20)  # validation.validate's default
    val.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="where naive curves are cached (default $XDG_CACHE_HOME/ensstab_dask/naive, "
        "else ~/.cache/ensstab_dask/naive)",
    )
    _add_cluster_options(val)
    _add_quiet(val)
    _add_output_options(val)
    val.set_defaults(func=_cmd_validate)

    rep = sub.add_parser(
        "report",
        help="pictures and a self-contained index.html of an estimate or a sweep",
        description="Draw the pictures that apply to a result (an estimate, a validation or a sweep) and write them "
        "into DIR with a self-contained index.html. RESULT is a netCDF file (from estimate, validate or sweep "
        "--output, or from export) or a sweep store (the .zarr directory of sweep --store).",
    )
    rep.add_argument(
        "result",
        metavar="RESULT",
        help="a netCDF file (estimate, validate or sweep --output, or export) or a sweep store (PATH.zarr)",
    )
    rep.add_argument("-o", "--output", metavar="DIR", required=True, help="directory to write (PNG files, index.html)")
    rep.add_argument("--overwrite", action="store_true", help="replace an existing, non-empty DIR")
    rep.add_argument("--real-stability", type=float, help="sweeps: the observed single-selector stability")
    rep.add_argument("--n-useful", type=float, help="sweeps: the observed n_useful")
    rep.add_argument("--n-runs", type=int, help="sweeps: the runs behind the observed n_useful")
    rep.set_defaults(func=_cmd_report)

    ver = sub.add_parser(
        "verify",
        help="check a sweep store: its metadata against its record, and data behind every done cell",
        description="Check a sweep store: its attributes and coordinates against the settings record written with "
        "it, and data behind every cell marked done. Exit status 0 when sound, 1 when damaged.",
    )
    ver.add_argument("store", metavar="STORE", help="the sweep's zarr store (the PATH.zarr of sweep --store)")
    ver.set_defaults(func=_cmd_verify)

    ex = sub.add_parser(
        "export",
        help="write a finished sweep store to netCDF",
        description="Write a finished sweep store to one netCDF file, after checking it as verify does. The file "
        "is written under a temporary name and renamed into place.",
    )
    ex.add_argument("store", metavar="STORE", help="the sweep's zarr store (the PATH.zarr of sweep --store)")
    ex.add_argument("out", metavar="OUT.nc", help="the netCDF file to write (not inside STORE)")
    ex.add_argument("--overwrite", action="store_true", help="replace an existing OUT.nc")
    ex.add_argument("--allow-incomplete", action="store_true", help="export even if some cells are not computed yet")
    ex.set_defaults(func=_cmd_export)

    for command in sub.choices.values():
        command.set_defaults(cli_options=_cli_options(command))
    return parser


@contextlib.contextmanager
def _log_to_stderr(level: int) -> Iterator[None]:
    """Show the ``ensstab_dask`` logger's messages of ``level`` and above on stderr while
    a command runs: the message alone, one line each, like the CLI's own lines.

    The handler is removed afterwards, so that ``main`` called again in one process
    (the tests, a notebook) does not print each message twice.
    """
    log = logging.getLogger("ensstab_dask")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(level)
    previous = log.level
    if log.getEffectiveLevel() > level:
        log.setLevel(level)
    log.addHandler(handler)
    try:
        from tqdm.contrib.logging import logging_redirect_tqdm

        # A note logged while a bar is live goes above the bar, not onto its line.
        with logging_redirect_tqdm(loggers=[log]):
            yield
    finally:
        log.removeHandler(handler)
        log.setLevel(previous)


#: Options whose value is a list or a range: a value starting with '-' (-0.2,0.5) is not
#: one number, so argparse would take it for an option and say "expected one argument".
_LIST_OPTIONS = ("--p", "--n-useful", "--m-ensemble")
_NEGATIVE_VALUES = re.compile(r"-[0-9.][0-9.,:eE+-]*")


def _attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--p -0.2,0.5`` as ``--p=-0.2,0.5``, so that the range check reports the value."""
    rest, out = list(argv), []  # type: list[str], list[str]
    while rest:
        token = rest.pop(0)
        if token == "--":  # what follows is positional, whatever it looks like
            return out + [token] + rest
        if token in _LIST_OPTIONS and rest and _NEGATIVE_VALUES.fullmatch(rest[0]):
            token = f"{token}={rest.pop(0)}"
        out.append(token)
    return out


#: The library's names that are not the option's dest.
_LIBRARY_NAMES = {"client": "scheduler", "out_dir": "output"}
_CLI_HINT = re.compile(r"\b\w+=[^;]*? \(CLI:? ([^)]*)\)")  # "pass overwrite=True (CLI: --overwrite)"
_QUOTED_SETTING = re.compile(r"\b(\w+)='([^']*)'")  # "model='two-level'"
_SUBJECT = re.compile(r"\w+")


def _cli_options(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option of ``parser`` by its dest, the library's name for it: n_target -> --n-target."""
    return {
        action.dest: next(o for o in action.option_strings if o.startswith("--"))
        for action in parser._actions  # argparse has no public list of a parser's options
        if any(o.startswith("--") for o in action.option_strings)
    }


def _cli_words(message: str, options: dict[str, str]) -> str:
    """A library error message in the command line's words: the "(CLI: --x)" hints in place
    of the library's keywords, and the parameters it names as this command's options."""
    message = _CLI_HINT.sub(r"\1", message)

    def option(name: str) -> str | None:
        return options.get(_LIBRARY_NAMES.get(name, name))

    message = _QUOTED_SETTING.sub(lambda m: f"{option(m[1])} {m[2]}" if option(m[1]) else m[0], message)
    subject = _SUBJECT.match(message)  # "n_target must be in [1, 2000]", "client: malformed ..."
    replacement = option(subject[0]) if subject else None
    if subject and replacement:
        message = replacement + message[subject.end() :]
    return message


def _resumable(args) -> bool:
    """Whether a rerun of this command resumes: a sweep whose store has been made."""
    import os

    return getattr(args, "command", None) == "sweep" and bool(args.store) and os.path.exists(args.store)


def _on_ctrl_c(signum, frame):
    """Python's KeyboardInterrupt, with the reports of the shutdown that follows silenced.

    From here on the process only stops: closing the cluster with tasks still running
    makes distributed log errors, and asyncio reports each future left pending ("Task
    exception was never retrieved") when it is collected, as late as the interpreter's
    exit. None of it is news after a Ctrl-C, and it would bury the one line that is.
    """
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    raise KeyboardInterrupt


@contextlib.contextmanager
def _ctrl_c_handled() -> Iterator[None]:
    """Ctrl-C raises through :func:`_on_ctrl_c` while a command runs; where SIGINT has
    another handler (ignored, as for a background job), or off the main thread (where
    handlers cannot be set), it is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = None
    options: dict[str, str] = {}

    def error(message: str) -> None:
        print(f"ensstab: error: {_cli_words(message, options)}", file=sys.stderr)

    try:
        with _ctrl_c_handled():
            args = parser.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else argv))
            if args.command is None:
                parser.print_help()
                return 2
            options = args.cli_options
            with _log_to_stderr(logging.WARNING if getattr(args, "quiet", False) else logging.INFO):
                return args.func(args)
    except SchedulerLost as exc:  # before OSError: it is a ConnectionError
        error(f"{exc}; rerun the same command to resume from the store" if _resumable(args) else str(exc))
        return 1
    except UsageError as exc:  # in the command line's words already
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, ImportError) as exc:  # OSError includes ConnectionError
        error(str(exc))
        return 2
    except MemoryError:
        error("out of memory; lower --m-ensemble, --m-stability, --n-runs or the grid")
        return 2
    except RuntimeError as exc:  # netCDF4 reports a full disk as RuntimeError("NetCDF: HDF error")
        error(str(exc))
        return 2
    except KeyboardInterrupt:
        _close_interrupted_clusters()
        hint = "; finished blocks are in the store, rerun the same command to resume" if _resumable(args) else ""
        print(f"ensstab: interrupted{hint}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
