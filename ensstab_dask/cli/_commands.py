"""The commands: one function each, ``args`` in, exit status out."""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
import time
import warnings

import numpy as np

from ensstab_dask._version import __version__
from ensstab_dask.budget.cost import check_cost
from ensstab_dask.budget.memory import check_cell_memory
from ensstab_dask.checks import check_seed
from ensstab_dask.cli._common import (
    OptionSpelling,
    UsageError,
    check_before_the_data,
    check_outputs,
    checked_work,
    cluster_options,
    default_cache_dir,
    estimate_options,
    for_the_target,
    load_data,
    n_targets_of,
    parse_values,
    report_input,
    target_record,
    write_json_option,
    write_outputs,
)
from ensstab_dask.estimates.stages.pipeline import estimate_checked
from ensstab_dask.estimates.validation.harness import VALIDATE_DEFAULTS, validate_checked
from ensstab_dask.exceptions import InvalidParameterError, OutputNotWritten, UnreliableEstimateWarning
from ensstab_dask.models import get_model
from ensstab_dask.outputs import check_writable, refuse_to_replace, write_netcdf
from ensstab_dask.plotting.report import write_report
from ensstab_dask.real.targets import task_of
from ensstab_dask.simulator.kernel import simulated_stability
from ensstab_dask.sweeps.storage import StoreDamaged, SweepStore, export_netcdf
from ensstab_dask.sweeps.sweep import sweep


def command_simulate(args) -> int:
    check_seed(args.seed)  # recorded in --json: refused, as the other commands refuse it, if it cannot be
    check_outputs(argparse.Namespace(json=args.json, output=None, overwrite=args.overwrite))
    m_values = parse_values(args.m_ensemble, int, name="--m-ensemble")
    simulated = sum(args.m_stability * m for m in m_values)
    check_cost("simulate", n_feature=args.n_feature, simulated=simulated, allow_large=args.yes)
    # As sweep and estimate do: the largest ensemble's rankings must fit, before any is drawn.
    check_cell_memory(args.n_feature, args.n_target, max(m_values), args.m_stability, None)
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
            variant=args.variant,
            h=args.h,
        )
        for m in m_values
    }
    seconds = time.perf_counter() - start
    print(
        f"simulated {args.index} stability of {args.aggregate} ensembles: n_feature={args.n_feature} "
        f"n_target={args.n_target} n_useful={args.n_useful} p={args.p} m_stability={args.m_stability} seed={args.seed}"
        + (f" model={args.variant} h={args.h}" if args.variant != "onda" else "")
    )
    print(f"{'m_ensemble':>10}  stability")
    for m, s in curve.items():
        print(f"{m:>10}  {s:.4f}")
    print(f"({seconds:.2f} s)")
    if args.json:
        keys = ("n_feature", "n_target", "n_useful", "p", "m_stability", "aggregate", "index", "seed", "variant", "h")
        payload = {"model" if k == "variant" else k: getattr(args, k) for k in keys}  # the JSON's key, as before
        payload.update(curve={str(m): s for m, s in curve.items()}, seconds=seconds, version=__version__)
        write_json_option(args, payload)
    return 0


def command_sweep(args) -> int:
    if args.output:
        check_outputs(argparse.Namespace(json=None, output=args.output, overwrite=args.overwrite))
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
        allow_large=args.yes,
        **cluster_options(args),
    )
    if args.output:
        write_netcdf(ds, args.output, overwrite=args.overwrite)
    sizes = ", ".join(f"{d}: {n}" for d, n in ds.sizes.items() if d != "repeat")
    print(
        f"sweep done ({sizes})"
        + (f"; store {args.store}" if args.store else "")
        + (f"; wrote {args.output}" if args.output else "")
    )
    if not args.store and not args.output:
        print(ds["stability"].to_dataframe().drop(columns="n_runs", errors="ignore").to_string())
    for step in _next_steps(args.store, args.output):
        print(step)
    return 0


def _next_steps(store: str | None, output: str | None) -> list[str]:
    """What to do with a finished sweep, as commands to copy: check its store, export it, draw it."""

    def stem(path: str) -> str:
        return os.path.splitext(os.path.basename(os.path.normpath(path)))[0] or "sweep"

    steps = []
    if store:
        steps.append(f"  ensstab verify {shlex.quote(store)}   (checks every cell against the store's record)")
        if not output:
            netcdf = shlex.quote(stem(store) + ".nc")
            steps.append(f"  ensstab export {shlex.quote(store)} {netcdf}   (one netCDF file)")
    drawn = output or store
    if drawn:
        report = shlex.quote(stem(drawn) + "-report/")
        steps.append(f"  ensstab report {shlex.quote(drawn)} -o {report}   (pictures and an index.html)")
    return ["next:", *steps] if steps else []


def command_export(args) -> int:
    out = export_netcdf(args.store, args.out, overwrite=args.overwrite, allow_incomplete=args.allow_incomplete)
    print(f"wrote {out}")
    return 0


def command_verify(args) -> int:
    store = SweepStore(args.store)
    if not store.path.exists():
        raise UsageError(f"{args.store}: no such store")
    if not store.path.is_dir():
        raise UsageError(f"{args.store}: not a sweep store (a store is a folder, like sweep.zarr)")
    try:
        found = store.inspect()  # what export and report check too
    except StoreDamaged as exc:
        print(f"ensstab: error: {exc}", file=sys.stderr)
        return 1
    for problem in found.problems:
        print(f"{args.store}: {problem}")
    if found.problems:
        done = "" if found.done is None else f"{int(found.done.sum())} of {found.done.size} cells done; "
        print(f"{args.store}: damaged; {done}{found.advice}")
        return 1
    mask = found.done
    assert mask is not None  # read whole whenever no problem was found
    print(f"{args.store}: ok; {int(mask.sum())} of {mask.size} cells done")
    return 0


def command_estimate(args) -> int:
    check_outputs(args)
    cluster = cluster_options(args)
    cache_dir = _cache_dir(args)
    if getattr(args, "groupby", None) is not None:
        return _estimate_groups(args, cluster, cache_dir)
    if args.groups is not None or "--reference" in args.typed:
        raise UsageError("--groups and --reference choose among the groups of --groupby COLUMN; give it")
    n_target = n_targets_of(args, several=not args.validate)
    options = estimate_options(args)
    if args.validate:
        options = _naive_copies(args, options)
    check_before_the_data(args, options, n_target, naive=args.validate)
    for option in ("--features", "--write-h5ad"):
        if getattr(args, option[2:].replace("-", "_")) and get_model(args.model).copy_design() is None:
            raise UsageError(f"{option}: --model {args.model} runs no real ensemble copies to count features on")
    data, source, data_line = load_data(args)
    options = for_the_target(args, data, options)
    if args.validate and options["resample"] != "half":
        print(
            "ensstab: note: --resample applies to the estimate's runs; the naive check keeps the method's layout "
            "(each copy a random half, its members bootstrap samples of it)",
            file=sys.stderr,
        )
    print(data_line)
    val = None
    checked, settings, run = checked_work(args, data, options, cluster, cache_dir)
    with warnings.catch_warnings():
        # The summary prints every guard rail above the curve; no second copy on stderr.
        warnings.simplefilter("ignore", UnreliableEstimateWarning)
        if args.validate:  # the harness: it checks the naive check's cost before the estimate's work
            val = validate_checked(checked, n_target, settings, source=source, **run)
            val = val.spelled(OptionSpelling(args.cli_options))
            est = val.estimate
        else:
            est = estimate_checked(checked, n_target, settings, **run)
            est = est.spelled(OptionSpelling(args.cli_options))
    print(est.summary())
    if args.details:
        print(est.details())
    payload = est.to_dict()
    payload["data"] = source
    payload.update(target_record(data.y))
    if data.informative is not None:
        counts = est.single.selection_counts
        t = est.single.t_uniform
        payload["informative_features"] = int(len(data.informative))
        payload["useful_that_are_informative"] = int(np.isin(np.flatnonzero(counts > t), data.informative).sum())
        print(
            f"  known informative features: {len(data.informative)}; of the features above t_uniform, "
            f"{payload['useful_that_are_informative']} are informative"
        )
    if val is not None:
        naive = val.naive
        payload["validation"] = {
            "curve": {str(int(m)): float(v) for m, v in zip(naive["m_ensemble"].values, naive["stability"].values)},
            "real_runs": int(naive.attrs["real_runs"]),
            "seconds": float(naive.attrs["seconds"]),
            "per_m": val.to_dict()["per_m"],
        }
        print()
        print(val.comparison())
    ds = est.to_dataset() if val is None else val.to_dataset()
    ds.attrs["data"] = source
    write_outputs(args, payload, ds, est.features)
    return 0


def _estimate_groups(args, cluster: dict, cache_dir: str | None) -> int:
    """``estimate --groupby``: an estimate for each group against the reference, in one
    submission of real runs (:func:`~ensstab_dask.estimates.stages.groups.estimate_groups`)."""
    from ensstab_dask.estimates.stages.groups import GroupQuestion, estimate_groups_checked, group_problems

    given = [o for o, v in (("--label", args.label), ("--classes", args.classes)) if v is not None]
    given += [o for o in ("--validate", "--features") if getattr(args, o[2:], None)]
    if given:
        raise UsageError(f"--groupby names the label column and estimates each group alone; not with {given[0]}")
    if args.write_h5ad and get_model(args.model).copy_design() is None:
        raise UsageError(f"--write-h5ad: --model {args.model} runs no real ensemble copies to count features on")
    n_target = n_targets_of(args, several=False)
    options = estimate_options(args)
    check_before_the_data(args, options, n_target)
    # The labels read as classes, as estimate_groups reads them: the data are checked once, here.
    labelled = argparse.Namespace(**{**vars(args), "label": args.groupby, "task": "classification"})
    data, source, data_line = load_data(labelled)
    print(data_line)
    checked, settings, run = checked_work(args, data, options, cluster, cache_dir)
    question = GroupQuestion(group_problems(checked.y, args.groups, args.reference), args.reference, args.groupby)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreliableEstimateWarning)  # each summary prints its guard rails
        res = estimate_groups_checked(checked, n_target, question, settings, **run)
    res = res.spelled(OptionSpelling(args.cli_options))
    print(res.summary())
    markers = res.markers()
    print(f"\nstable features per group ({len(res.groups)} groups, real runs sent together in {res.seconds:.1f} s):")
    for g, names in markers.items():
        print(f"  {g}: {', '.join(names) if names else 'none'}")
    ds = res.to_dataset()
    ds.attrs["data"] = source
    from ensstab_dask.plotting.group_report import write_group_report

    def panels(out, overwrite: bool):  # one report, a panel per group
        return write_group_report(res, out, overwrite=overwrite)

    write_outputs(args, {**res.to_dict(), "data": source}, ds, report=panels, to_anndata=res)
    return 0


def _cache_dir(args) -> str | None:
    """The folder of --cache-dir (default :func:`default_cache_dir`), checked and made; None
    with --no-cache."""
    if getattr(args, "no_cache", False):
        if args.cache_dir is not None:
            raise UsageError("--cache-dir and --no-cache contradict each other: choose one")
        return None
    cache_dir = default_cache_dir() if args.cache_dir is None else args.cache_dir
    # The default folder was not asked for: name it as what it is, and the ways out.
    name = "--cache-dir" if args.cache_dir is not None else f"the default cache folder {cache_dir}"
    way_out = "" if args.cache_dir is not None else "; move it away, or pass --cache-dir DIR or --no-cache"
    shown = f"--cache-dir {cache_dir}" if args.cache_dir is not None else name
    if os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
        raise UsageError(f"{shown}: exists and is not a directory{way_out}")
    report = getattr(args, "report", None)
    if report is not None:  # the report replaces its folder whole: the cache in it would go with it
        cache, folder = os.path.realpath(cache_dir), os.path.realpath(report)
        if cache == folder or cache.startswith(folder + os.sep) or folder.startswith(cache + os.sep):
            where = "is" if cache == folder else "is inside" if cache.startswith(folder + os.sep) else "holds"
            raise UsageError(
                f"{shown} {where} --report {report}: the report is written into a folder of its own, and the cache "
                "kept apart from it; give each its own folder"
            )
    try:  # before it is made: never in the reference data folder, nor in a store
        refuse_to_replace(cache_dir, directory=True, overwrite=False, name=name)
    except InvalidParameterError as exc:
        raise UsageError(f"{exc}{way_out}") from None
    try:
        check_writable(cache_dir, inside=True)
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)  # private: whoever can write it can forge runs
    except (OutputNotWritten, OSError) as exc:
        if args.cache_dir is not None:
            raise UsageError(f"--cache-dir: {exc}") from None
        # The default folder, not asked for (a read-only home): run without a cache, and say so.
        print(f"ensstab: warning: no cache of the runs: {exc}; --cache-dir names another folder", file=sys.stderr)
        return None
    if not _private(cache_dir, default=args.cache_dir is None):
        return None
    return cache_dir


def _private(cache_dir: str, *, default: bool) -> bool:
    """Whether the cache folder may be used: whoever can write it can forge runs. The default
    folder is made 0700; found writable by others, it is made 0700 again when it is this
    user's (said), and left unused when it is not (said). A folder the user named is theirs
    to share: one that others can write is used, and said."""
    try:
        st = os.stat(cache_dir)
    except OSError:
        return True  # checked writable a moment ago; any failure will be said where it is written
    if not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return True
    if not default:
        print(
            f"ensstab: warning: --cache-dir {cache_dir} can be written by other users, who could forge its runs",
            file=sys.stderr,
        )
        return True
    if st.st_uid == os.getuid():
        os.chmod(cache_dir, 0o700)
        print(
            f"ensstab: note: the cache folder {cache_dir} could be written by other users (mode "
            f"{stat.S_IMODE(st.st_mode):o}), who could forge its runs: made private (700)",
            file=sys.stderr,
        )
        return True
    print(
        f"ensstab: warning: no cache of the runs: the cache folder {cache_dir} belongs to another user and others "
        "can write it; --cache-dir names another folder",
        file=sys.stderr,
    )
    return False


def command_cache(args) -> int:
    """Where the cache is, what it holds; with --clear or --older-than, remove entries."""
    import datetime

    from ensstab_dask.real.run_cache import cache_entries

    cache_dir = default_cache_dir() if args.cache_dir is None else args.cache_dir
    if os.path.exists(cache_dir) and not os.path.isdir(cache_dir):
        raise UsageError(f"--cache-dir {cache_dir}: exists and is not a directory")
    entries = cache_entries(cache_dir)
    print(f"cache: {cache_dir}: {_entries_said(entries)}")
    if not (args.clear or args.older_than):
        return 0
    if args.older_than:
        start = datetime.datetime.combine(args.older_than, datetime.time()).timestamp()
        entries = [e for e in entries if e.modified < start]
    removed = []
    for entry in entries:
        try:
            entry.path.unlink()
        except FileNotFoundError:  # removed meanwhile: as good as removed here
            continue
        except OSError as exc:
            print(f"ensstab: warning: {entry.path} was not removed: {exc}", file=sys.stderr)
            continue
        removed.append(entry)
    print(f"removed {_entries_said(removed)}")
    return 0


def _entries_said(entries) -> str:
    """``N entries, S MB, from DATE to DATE`` (or none)."""
    if not entries:
        return "no entries"
    total = sum(e.size for e in entries)
    size = f"{total / 1e6:,.1f} MB" if total >= 1e6 else f"{total / 1e3:,.1f} kB"
    first, last = (time.strftime("%Y-%m-%d", time.localtime(e.modified)) for e in (entries[0], entries[-1]))
    when = f"written {first}" if first == last else f"written from {first} to {last}"
    return f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}, {size}, {when}"


def _naive_copies(args, options: dict) -> dict:
    """The options of a run with the naive check: unless --m-stability is typed, the
    library's default for the naive check's copies (20), not the estimate's 50, so that the
    command line and the library compare with the same direct measurement."""
    if "--m-stability" in args.typed:
        return options
    return dict(options, **VALIDATE_DEFAULTS)  # validate()'s own defaults, from where it declares them


def command_compare(args) -> int:
    """``ensstab compare``: an estimate per selector, their runs in one submission, the choice."""
    from ensstab_dask.estimates.stages.compare import compare_checked, named_selectors
    from ensstab_dask.plotting.compare_report import write_compare_report

    if args.groupby is not None or args.groups is not None or "--reference" in args.typed:
        raise UsageError("--groupby, --groups and --reference are estimate's: compare asks one question of the data")
    if "--selector" in args.typed:
        raise UsageError("--selector is estimate's one selector; compare takes several: --selectors a,b,...")
    check_outputs(args)
    cluster = cluster_options(args)
    cache_dir = _cache_dir(args)
    n_target = n_targets_of(args, several=False)
    options = estimate_options(args)
    options.pop("selector")  # the estimate's one selector; compare's are --selectors
    names = [n.strip() for n in args.selectors.split(",") if n.strip()]
    check_before_the_data(args, {**options, "selector": None}, n_target)
    data, source, data_line = load_data(args)
    print(data_line)
    task = task_of(data.y)
    selectors = named_selectors(names, task, n_estimators=args.n_estimators)
    checked, settings, run = checked_work(args, data, {**options, "task": task}, cluster, cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreliableEstimateWarning)  # each line says its verdict
        res = compare_checked(checked, n_target, selectors, settings, **run)
    res = res.spelled(OptionSpelling(args.cli_options))
    print(res.summary())
    payload = {**res.to_dict(), "data": source, **target_record(data.y)}
    ds = res.to_dataset()
    ds.attrs["data"] = source
    write_outputs(args, payload, ds, report=lambda out, overwrite: write_compare_report(res, out, overwrite=overwrite))
    return 0


def command_validate(args) -> int:
    if args.groupby is not None or args.groups is not None or "--reference" in args.typed:
        raise UsageError("--groupby, --groups and --reference are estimate's: validate checks one question")
    check_outputs(args)
    cluster = cluster_options(args)
    cache_dir = _cache_dir(args)
    n_target = n_targets_of(args, several=False)
    options = _naive_copies(args, estimate_options(args))
    check_before_the_data(args, options, n_target, naive=True)
    data, source, data_line = load_data(args)
    options = for_the_target(args, data, options)
    print(data_line)
    checked, settings, run = checked_work(args, data, options, cluster, cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreliableEstimateWarning)  # the table says it
        res = validate_checked(checked, n_target, settings, source=source, **run)
    res = res.spelled(OptionSpelling(args.cli_options))
    print(res.summary())
    ds = res.to_dataset()
    ds.attrs["data"] = source
    write_outputs(args, {**res.to_dict(), **target_record(data.y)}, ds)
    return 0


def command_report(args) -> int:
    if (args.real_stability is None) != (args.n_useful is None):  # the library's own check, in these words
        raise UsageError("--real-stability and --n-useful go together: the calibration picture draws the observed pair")
    index = write_report(
        report_input(args.result),
        args.output,
        overwrite=args.overwrite,
        real_stability=args.real_stability,
        n_useful=args.n_useful,
        n_runs=args.n_runs,
        parameter_names=args.cli_options,  # the captions name --real-stability and --n-useful
    )
    pictures = sorted(p.name for p in index.parent.glob("*.png"))
    print(f"wrote {index} with {len(pictures)} pictures: {', '.join(pictures)}")
    return 0
