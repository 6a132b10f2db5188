"""What the commands share: the command line's own errors, values and lists, the settings
the library's messages name spelled as this command's options (:class:`OptionSpelling`), where work runs (--scheduler,
--timeout, --tls-*), the data and the estimate's options, and outputs."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ensstab_dask.budget.cost import MAX_REAL_RUNS
from ensstab_dask.checks import check_int, check_real
from ensstab_dask.cluster.clients import LOCAL_KINDS, check_address, local_kind
from ensstab_dask.exceptions import EnsstabError, InvalidParameterError, OutputNotWritten
from ensstab_dask.outputs import (
    atomic_output,
    check_writable,
    read_netcdf,
    refuse_to_replace,
    write_json,
    write_netcdf,
)
from ensstab_dask.real.datasets import (
    CheckedData,
    check_data,
    class_counts,
    load_dataset,
    make_microarray,
    select_classes,
)
from ensstab_dask.real.named_selectors import NAMED_SELECTORS, named_selector
from ensstab_dask.real.selectors import DEFAULT_TREES, library_of
from ensstab_dask.real.targets import target_line, task_of
from ensstab_dask.settings import SETTINGS, USED_WHEN, EstimateSettings, models_using, refuse_cutoff_with_pfer
from ensstab_dask.settings.constraints import Flag, OrNone
from ensstab_dask.wording import NAME_ONLY, Param, Text, python

#: The path that names standard output (``--json -``), as in most command-line tools.
STDOUT = "-"


class UsageError(EnsstabError):
    """A problem with the command line itself: reported in one line, exit status 2."""


#: The library's parameters that the command line spells otherwise: each with the dests of
#: the options that set it. Every other parameter is the dest of its option (n_target: --n-target).
LIBRARY_NAMES = {
    "client": ("scheduler",),
    "out_dir": ("output",),
    "allow_large": ("yes",),
    "security": ("tls_ca_file", "tls_cert", "tls_key"),
}


@dataclasses.dataclass(frozen=True)
class OptionSpelling:
    """The command line's spelling of the settings a library message names
    (:class:`~ensstab_dask.wording.Param`): each by its option in this command
    (``options``: each option by its dest), the one place the library's names become options.

    ``n_target`` -> ``--n-target``, ``overwrite=True`` -> ``--overwrite``,
    ``model='anchored'`` -> ``--model anchored``, ``verify=False`` -> ``--no-verify``,
    ``security=...`` -> ``--tls-ca-file, --tls-cert and --tls-key``; a parameter this command
    has no option for keeps Python's spelling.
    """

    options: dict[str, str]

    def flags(self, name: str) -> list[str]:
        """The options of this command that set the library's parameter ``name``."""
        return [self.options[dest] for dest in LIBRARY_NAMES.get(name, (name,)) if dest in self.options]

    def __call__(self, p: Param) -> str:
        if p.value is NAME_ONLY:
            named = self.flags(p.name)
            return named[0] if named else python(p)
        named = self.flags(f"no_{p.name}") if p.value is False else self.flags(p.name)
        if not named:
            return python(p)
        if len(named) > 1:  # several options set it: name them, not the library's value
            return ", ".join(named[:-1]) + " and " + named[-1]
        if isinstance(p.value, bool):
            return named[0]
        return f"{named[0]} {'...' if p.value is Ellipsis else p.value}"


def message_of(exc: BaseException) -> str:
    """An error's message as raised: a :class:`~ensstab_dask.wording.Text` where the library
    named settings in it (``str(exc)`` would be Python's spelling alone)."""
    return exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Text) else str(exc)


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


def _quiet_client_logs() -> None:
    """The CLI reports a lost or unreachable scheduler itself, in one line; distributed's
    client would also log its reconnection attempts with tracebacks, and its batched
    stream a write to a dead scheduler ("Batched Comm Closed", with a traceback, when the
    loss comes mid-write as on a loaded machine). Importing distributed sets its loggers'
    levels, so this runs after that import."""
    import distributed  # noqa: F401

    for name in ("distributed.client", "distributed.comm", "distributed.batched"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def cluster_options(args) -> dict:
    """The ``client`` keyword of the library's calls, from --scheduler, checked before any work."""
    if args.scheduler is not None and local_kind(args.scheduler) is None:
        if ":" not in args.scheduler:  # neither a name nor an address; the library's message names its API
            raise UsageError(
                f"--scheduler must be {', '.join(LOCAL_KINDS)} or a scheduler address like tcp://host:8786; "
                f"got {args.scheduler!r}"
            )
        check_address(args.scheduler)  # a malformed one fails now, not once the work is planned
        _quiet_client_logs()
    if getattr(args, "workers", None) is not None:
        check_int(args.workers, "workers", minimum=1)
        if local_kind(args.scheduler or "processes") not in ("processes", "threads"):
            raise UsageError(
                f"--workers is for a local cluster (--scheduler processes or threads), not {args.scheduler}"
            )
        return dict(client=None)  # the local cluster of the command's session (cli.main)
    return dict(client=args.scheduler)


def dask_config(args) -> dict:
    """--timeout and the --tls-* options as dask's own configuration, which
    :func:`~ensstab_dask.cluster.connect` reads (as ``distributed.Client`` does): options
    not given keep the dask config's values."""
    if not hasattr(args, "scheduler"):
        return {}
    # distributed's defaults must be in dask's config before dask.config.set: leaving it
    # would otherwise drop the whole "distributed" section that the import added inside.
    import distributed  # noqa: F401

    check_real(args.timeout, "timeout", minimum=0.0, open_minimum=True)  # -5 or nan would wait forever
    config: dict[str, object] = {"distributed.comm.timeouts.connect": f"{args.timeout}s"}
    given = {k: getattr(args, k) for k in ("tls_ca_file", "tls_cert", "tls_key")}
    if not any(given.values()):
        return config
    for name, path in given.items():
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"--{name.replace('_', '-')} {path}: no such file")
    if not (args.scheduler or "").startswith("tls://"):
        raise UsageError(f"--tls-* options need a tls:// --scheduler address, got {args.scheduler!r}")
    keys = {"tls_ca_file": "ca-file", "tls_cert": "client.cert", "tls_key": "client.key"}
    config.update({f"distributed.comm.tls.{keys[k]}": v for k, v in given.items() if v is not None})
    config["distributed.comm.require-encryption"] = True
    return config


def for_the_target(args, data, options: dict) -> dict:
    """``options`` for the data's target: a regression target's selector is the regressor
    of ``--selector``, and ``task`` as the data were read (a whole-number target read as
    regression stays one)."""
    task = task_of(data.y)
    selector = (
        options["selector"] if task == "classification" else named_selector(args.selector, args.n_estimators, task)
    )
    return {**options, "selector": selector, "task": task}


def checked_work(args, data, options: dict, cluster: dict, cache_dir) -> tuple[CheckedData, dict, dict]:
    """What the library's checked entries take: the data of :func:`load_data` (checked there,
    once, for the task the estimate reads: :func:`for_the_target`), the settings among
    ``options``, and where and how the work runs."""
    settings = {k: v for k, v in options.items() if k not in ("allow_large", "task")}
    run = dict(
        client=cluster.get("client"),
        progress=not args.quiet,
        cache_dir=cache_dir,
        allow_large=bool(options.get("allow_large", False)),
    )
    return CheckedData(data.X, data.y, data.feature_names), settings, run


def target_record(y) -> dict:
    """What the JSON says of the label: its classes and counts, or a regression target's range."""
    if task_of(y) == "classification":
        return {"classes": class_counts(y)}
    y = np.asarray(y)
    return {
        "target": {"task": "regression", "min": float(y.min()), "max": float(y.max()), "median": float(np.median(y))}
    }


def _resample(text: str) -> str | float:
    """A resample option's value: a fraction (0.7) as a number, a name as it is."""
    try:
        return float(text)
    except ValueError:
        return text


def check_outputs(args) -> None:
    """Before any work: an output that exists, or must never be written there (a store, the
    data, a device, a FIFO or a socket), and one file named by two outputs."""
    named = (
        ("--json", args.json),
        ("--output", args.output),
        ("--features", getattr(args, "features", None)),
        ("--write-h5ad", getattr(args, "write_h5ad", None)),
    )
    if getattr(args, "write_h5ad", None) is not None and not str(args.data or "").lower().endswith(".h5ad"):
        raise UsageError(
            f"--write-h5ad writes the results into a copy of an .h5ad --data file; got --data {args.data or '(none)'}"
        )
    given = [(option, path) for option, path in named if path is not None]
    report = [("--report", args.report)] if getattr(args, "report", None) is not None else []
    for (first, path), (second, other) in itertools.combinations(given + report, 2):
        if os.path.realpath(path) == os.path.realpath(other):
            raise UsageError(
                f"{first} and {second} name one file, {path}: the second would replace the first; give each its own"
            )
    for option, path in given:
        if path == STDOUT:
            if option != "--json":
                raise UsageError(f"{option} -: only --json writes to standard output; give a file name")
            continue
        try:
            refuse_to_replace(path, overwrite=args.overwrite, name=option)
        except InvalidParameterError as exc:
            raise UsageError(str(exc)) from None
        if os.path.exists(path) and not args.overwrite:
            raise UsageError(f"{option} {path} exists; pass --overwrite to replace it")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{option} {path}: directory {folder} does not exist")
        try:
            check_writable(path)
        except OutputNotWritten as exc:
            raise UsageError(f"{option}: {exc}") from None
    if report:
        _check_report_dir(args.report, overwrite=args.overwrite)
        inside = os.path.realpath(args.report) + os.sep
        for option, path in given:
            if path != STDOUT and os.path.realpath(path).startswith(inside):
                raise UsageError(f"{option} {path} is inside --report {args.report}: the report replaces that folder")


def _check_report_dir(path: str, *, overwrite: bool) -> None:
    """--report's folder, before any work: what write_report would refuse after it."""
    try:
        refuse_to_replace(path, directory=True, overwrite=overwrite, name="--report")
    except InvalidParameterError as exc:
        raise UsageError(str(exc)) from None
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--report {path}: exists and is not a directory")
    if os.path.isdir(path) and any(os.scandir(path)) and not overwrite:
        raise UsageError(f"--report {path} exists and is not empty; pass --overwrite to replace it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--report {path}: directory {folder} does not exist")
    try:
        check_writable(path, inside=True)
    except OutputNotWritten as exc:
        raise UsageError(f"--report: {exc}") from None


@contextlib.contextmanager
def _foreign_warnings_brief(path: str, *, quiet: bool) -> Iterator[None]:
    """Warnings that other libraries raise while the data are read, said in one line on
    stderr: per library and kind, how many and the first one's first line; with --quiet,
    only how many.

    Python would print each as two lines or more (the warning, then the source line that
    raised it), and anndata reading scanpy's own example file raises 36 (one per element
    written by an older anndata): a screen of text before the answer, for something the
    user can do nothing about in this run.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    kinds: dict[tuple, list[str]] = {}
    for w in caught:
        first = str(w.message).strip().splitlines()[0] if str(w.message).strip() else ""
        kinds.setdefault((library_of(w.filename), w.category.__name__), []).append(first)
    if not kinds:
        return
    if quiet:
        print(
            f"ensstab: note: {len(caught)} warning(s) from other libraries while reading {path}; "
            "run without --quiet to see them",
            file=sys.stderr,
        )
        return
    said = [
        f"{library}: {category}" + (f" x{len(texts)}, the first: " if len(texts) > 1 else ": ") + texts[0]
        for (library, category), texts in kinds.items()
    ]
    print(f"ensstab: warning: while reading {path}: {'; '.join(said)}", file=sys.stderr)


def _column(text: str | None):
    """A column given on the command line: a position where it is a whole number, else a name."""
    return int(text) if text is not None and text.lstrip("-").isdigit() else text


def _read_options(args) -> dict:
    """The keywords of load_dataset that the data options give; a pair of opposites is refused."""
    for yes, no in (("index_col", "no_index_col"), ("transpose", "no_transpose")):
        if getattr(args, yes) not in (None, False) and getattr(args, no):
            raise UsageError(
                f"--{yes.replace('_', '-')} and --{no.replace('_', '-')} contradict each other: choose one"
            )
    # A format refuses the options that are not its own (load_dataset says which).
    return dict(
        index_col=False if args.no_index_col else _column(args.index_col),
        transpose=True if args.transpose else False if args.no_transpose else None,
        layer=args.layer,
        use_raw=args.use_raw,
        task=args.task,
    )


def _shape(X) -> str:
    """X's size as the data line says it, and how much of a sparse X is stored."""
    shape = f"X {X.shape[0]} x {X.shape[1]}"
    return shape + (f" (sparse, {X.nnz / max(1, X.shape[0] * X.shape[1]):.1%} stored)" if hasattr(X, "nnz") else "")


def load_data(args):
    """The data of --data (or the embedded default), with only the classes of --classes, and
    the data line: where they came from, their size, their classes and counts."""
    if args.data:
        with _foreign_warnings_brief(args.data, quiet=args.quiet):
            data = load_dataset(args.data, label=_column(args.label), **_read_options(args))
        source = args.data
    else:
        data = make_microarray(seed=0)
        data = data._replace(**dict(zip("Xy", check_data(data.X, data.y))))  # as load_dataset checks a file's
        source = "embedded default (make_microarray(seed=0): 62 samples, 2000 features, 40 informative)"
    if task_of(data.y) == "regression":
        if args.classes is not None:
            raise UsageError("--classes selects classes of class labels; this label is a regression target")
        return data, source, f"data: {source}; {_shape(data.X)}; y {target_line(data.y)}"
    every = class_counts(data.y)
    if args.classes is not None:
        data = select_classes(data, args.classes)
    counts = class_counts(data.y)
    shape = _shape(data.X)
    listed = ", ".join(f"{label} ({n})" for label, n in counts.items())
    line = f"data: {source}; {shape}; {len(counts)} classes: {listed}"
    if len(counts) < len(every):
        line += f" (chosen by --classes of {len(every)})"
    elif len(counts) > 2 and getattr(args, "groupby", None) is None:  # --groupby: each group against the rest
        line += (
            f"; all {len(counts)} used, features ranked by how they separate every class (two of them: --classes A,B)"
        )
    return data, source, line


def _setting_values(args) -> dict:
    """The estimate's settings as the options give them, the selector by its name."""
    check_int(args.n_estimators, "n_estimators", minimum=1)
    options = {setting.name: getattr(args, setting.name, None) for setting in SETTINGS}
    for setting in SETTINGS:  # a choice that may be None is typed as the word none (cli._parser._add_setting)
        if isinstance(setting.constraint, OrNone) and options[setting.name] == "none":
            options[setting.name] = None
    for setting in SETTINGS:
        if isinstance(setting.constraint, Flag) and setting.default:  # offered as --no-NAME
            options[setting.name] = not getattr(args, f"no_{setting.name}")
    options.update(
        m_ensemble=parse_values(args.m_ensemble, int, name="--m-ensemble"),
        member_resample=_resample(args.member_resample),
        resample=_resample(args.resample),
    )
    return options


def estimate_options(args) -> dict:
    """The keywords of estimate() that the estimate's options give (shared by estimate and
    validate), one per setting of :data:`~ensstab_dask.settings.SETTINGS`; each is checked by
    its own constraint there (:meth:`~ensstab_dask.settings.EstimateSettings.check_each`),
    so that a bad one is refused before the data are read."""
    options = _setting_values(args)
    options["selector"] = named_selector(args.selector, args.n_estimators)
    EstimateSettings.check_each(options)
    return {**options, "allow_large": args.yes}


#: The options that read something of the --data file: meaningless without one.
_FILE_OPTIONS = (
    "--label",
    "--groupby",
    "--layer",
    "--use-raw",
    "--index-col",
    "--no-index-col",
    "--transpose",
    "--no-transpose",
)


def check_options_alone(args) -> None:
    """What the estimate's options decide with neither the data nor a heavy library: each
    setting by its constraint and those that must go together, on a stand-in problem. Run
    before the command imports Dask and scikit-learn (seconds on a busy machine), so that
    such a mistake is refused at once; the command checks them all again, the selector and
    the data's size with them."""
    reading = [o for o in _FILE_OPTIONS if o in args.typed]
    if reading and not args.data:
        raise UsageError(
            f"{reading[0]} reads the file of --data; without --data the estimate runs on the embedded default, "
            "which has its own labels: give --data PATH"
        )
    n_targets = n_targets_of(args, several=True)
    values = _setting_values(args)
    values.pop("selector")  # made by name later: it imports scikit-learn
    EstimateSettings.check_each(values)
    if values.get("pfer") is not None and "--cutoff" in args.typed:
        refuse_cutoff_with_pfer(values["cutoff"], values["pfer"])
    n_target = max(n_targets) if isinstance(n_targets, list) else n_targets
    # The values as given, not as check_each fills them: a default filled in reads as asked for.
    EstimateSettings(n_feature=n_target + 1, n_target=n_target, **values, data_known=False)


def check_before_the_data(args, options: dict, n_targets, *, naive: bool = False) -> None:
    """What the options decide alone, before the data are read: each one (by
    :func:`estimate_options`), the settings that must go together, the simulated selectors
    (their time at least the simulator's rate on the smallest problem) and the trees of
    ``--n-estimators`` over the estimate's real runs (and, with ``naive``, the naive
    check's); and a warning for each option typed that ``--model`` does not use. The real
    runs' own count is priced on the data, where one of them is timed."""
    # Here, as in the functions below: the estimate's modules import xarray and scipy, which the
    # parser and main() never need (ensstab --help; tests/cli/test_startup.py).
    from ensstab_dask.estimates.stages.real_runs import check_estimate_cost
    from ensstab_dask.real.naive import naive_real_runs

    n_target = max(n_targets) if isinstance(n_targets, list) else n_targets
    if options.get("pfer") is not None and "--cutoff" in args.typed:  # typed at its default, it is still dropped
        refuse_cutoff_with_pfer(options["cutoff"], options["pfer"])
    # A stand-in problem: the checks that need the data's own size run again on the data.
    chosen = {k: v for k, v in options.items() if k != "allow_large"}
    settings = EstimateSettings(n_feature=n_target + 1, n_target=n_target, **chosen, data_known=False)
    real, _ = check_estimate_cost(None, settings, allow_large=args.yes)
    if naive:
        real += naive_real_runs(settings.m_list, settings.m_stability)  # priced on the data, where one is timed
    trees = real * args.n_estimators
    # At most the default trees, the real runs' own count (priced on the data) says it all.
    big_trees = args.n_estimators > DEFAULT_TREES and NAMED_SELECTORS[args.selector].trees
    if big_trees and not args.yes and trees > MAX_REAL_RUNS * DEFAULT_TREES:
        raise UsageError(
            f"--n-estimators {args.n_estimators}: the {real:,} real runs would grow {trees:,} trees, as many as "
            f"{trees // DEFAULT_TREES:,} runs of the default {DEFAULT_TREES} trees, above the {MAX_REAL_RUNS:,} real "
            "runs run without asking; check the size, or pass --yes to run it"
        )
    for dest, option in args.cli_options.items():
        setting = dest.removeprefix("no_")
        if setting in USED_WHEN and option in args.typed and args.model not in models_using(setting):
            print(
                f"ensstab: warning: {option} is not used by --model {args.model} (only by --model "
                f"{', '.join(models_using(setting))}); ignored",
                file=sys.stderr,
            )


def n_targets_of(args, *, several: bool):
    """--n-target as the library takes it: an int, or (``several``) a list of them."""
    values = parse_values(args.n_target, int, name="--n-target")
    for value in values:  # the bound by the data's features waits for the data
        check_int(value, "n_target", minimum=1)
    if len(values) > 1 and not several:
        what = "--validate compares" if getattr(args, "validate", False) else "validate compares"
        raise UsageError(f"--n-target: {what} one n_target with the naive check; got {len(values)} values")
    return values[0] if len(values) == 1 else values


def write_outputs(args, payload: dict, ds, features=None, *, report=None, to_anndata=None) -> None:
    """The outputs asked for; the feature table first (written whatever the verdict).
    ``report``: what writes ``--report``'s folder, ``(out_dir, overwrite) -> index.html``
    (default: the report of ``ds``). ``to_anndata``: what ``--write-h5ad`` writes into the
    data's copy (default: ``features``)."""
    from ensstab_dask.estimates.stages.features import write_feature_table  # here: as in check_before_the_data

    if getattr(args, "features", None):
        if features is None:
            raise UsageError(f"--features: --model {args.model} ran no real ensemble copies to count features on")
        write_feature_table(features, args.features, overwrite=args.overwrite)
    if args.json:
        write_json_option(args, payload)
    if getattr(args, "write_h5ad", None):
        write_h5ad_option(args, features if to_anndata is None else to_anndata)
    if args.output:
        write_netcdf(ds, args.output, overwrite=args.overwrite)
    if getattr(args, "report", None) is not None:
        from ensstab_dask.plotting.report import write_report

        write = report or (lambda out, overwrite: write_report(ds, out, overwrite=overwrite))
        index = write(args.report, args.overwrite)
        pictures = sorted(p.name for p in index.parent.glob("*.png"))
        print(f"wrote {index}" + (f" with {len(pictures)} pictures: {', '.join(pictures)}" if pictures else ""))


def write_h5ad_option(args, results) -> None:
    """``--write-h5ad``: the ``.h5ad`` data file read again whole, the results written into
    it where scanpy users look (:func:`~ensstab_dask.estimates.interop.to_anndata.write_frequencies_to_var`:
    an estimate's features, or every group's with their markers), saved as a new file."""
    import anndata

    from ensstab_dask.estimates.interop.to_anndata import write_frequencies_to_var

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said once already, when the data were read
        adata = anndata.read_h5ad(args.data)
    columns = write_frequencies_to_var(adata, results, layer=args.layer, use_raw=True if args.use_raw else None)
    with atomic_output(args.write_h5ad, overwrite=False) as tmp:
        adata.write_h5ad(tmp)
    markers = " and uns['ensstab_markers'] (rank_genes_groups' layout)" if hasattr(results, "estimates") else ""
    print(f"wrote {args.write_h5ad}: {len(columns)} columns of var{markers}")


def write_json_option(args, payload: dict) -> None:
    """``--json``'s output: the file it names, or standard output for ``-`` (where
    :func:`ensstab_dask.cli.main` has sent the command's printed lines to stderr)."""
    if args.json != STDOUT:
        write_json(payload, args.json, overwrite=args.overwrite)
        return
    stream = getattr(args, "json_stream", None) or sys.stdout
    json.dump(payload, stream, indent=2)
    stream.write("\n")
    stream.flush()


#: The default cache's folder in ``$XDG_CACHE_HOME/ensstab_dask`` (else ``~/.cache``), named
#: for what it holds.
CACHE_FOLDER = "real-runs"


def default_cache_dir() -> str:
    return os.path.join(_cache_home(), CACHE_FOLDER)


def _cache_home() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ensstab_dask")


_REPORT_READS = (
    "report reads a netCDF file (from estimate, validate or sweep --output, or from export) or a sweep store "
    "(the .zarr directory of sweep --store)"
)


def report_input(text: str):
    """The Dataset behind ``ensstab report RESULT``: a netCDF file, or a sweep store checked
    as ``export`` checks it and read as the sweep it holds (cells not computed yet are NaN,
    as in ``export --allow-incomplete``)."""

    from ensstab_dask.sweeps.storage import COMPLETED, StoreDamaged, SweepStore

    path = Path(text)
    if path.is_dir():
        store = SweepStore(path)
        try:
            store.settings()  # the record every sweep store has
        except StoreDamaged:
            raise
        except ValueError:
            raise UsageError(f"{path} is a directory but not a sweep store; {_REPORT_READS}") from None
        return store.checked().drop_vars(COMPLETED)
    if not path.exists():
        raise UsageError(f"{path}: no such file; {_REPORT_READS}")
    if not path.is_file():  # opened, a FIFO would wait for a writer forever
        raise UsageError(f"{path} is not a regular file (a FIFO, a device or a socket); {_REPORT_READS}")
    with open(path, "rb") as f:
        head = f.read(8)
    if not head.startswith((b"CDF", b"\x89HDF")):  # netCDF-3, and netCDF-4's HDF5
        raise UsageError(f"{path} is not a netCDF file; {_REPORT_READS}")
    try:
        return read_netcdf(path)  # bounded in time, its checksum checked: a damaged file is one line
    except InvalidParameterError as exc:
        raise UsageError(f"{exc}; {_REPORT_READS}") from None
