"""Warnings a selector's fits raise (scikit-learn's FutureWarning, a library's
UserWarning): noted once each where the runs run, and said once each by the caller."""

import io
import warnings

import numpy as np

from ensstab_dask.real.selectors import convergence_counted, library_of, run_batch, say_selector_warnings
from ensstab_dask.seeding import as_seed_sequence


def _warning_scorer(X, y, rng):
    warnings.warn("the default of 'x' will change in 1.9\nsecond line", FutureWarning, stacklevel=1)
    warnings.warn("Features [3] are constant.", UserWarning, stacklevel=1)
    return X.std(axis=0)


def _runs(every: bool):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 5)), np.repeat([0, 1], 6)
    seeds = [as_seed_sequence(s) for s in range(4)]
    with convergence_counted(every=every) as tally:
        run_batch(_warning_scorer, X, y, "half", seeds)
    return tally


def test_every_warning_of_the_fits_is_noted_once_each_not_shown():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        tally = _runs(every=True)
    assert shown == []
    assert [(c, first) for c, first, _ in tally.others] == [
        (FutureWarning, "the default of 'x' will change in 1.9"),
        (UserWarning, "Features [3] are constant."),
    ]
    assert tally.runs == 0  # none of them a ConvergenceWarning


def test_without_every_other_warnings_are_shown_as_before():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        tally = _runs(every=False)
    assert {w.category for w in shown} == {FutureWarning, UserWarning} and tally.others == {}


def test_said_once_each_however_many_tasks_noted_them():
    keys = list(_runs(every=True).others) * 3  # as from three tasks
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        say_selector_warnings(keys)
    assert [(w.category, str(w.message)) for w in said] == [
        (FutureWarning, "the selector's fits warned (test_selector_warnings): the default of 'x' will change in 1.9"),
        (UserWarning, "the selector's fits warned (test_selector_warnings): Features [3] are constant."),
    ]


def test_library_of_names_the_package_that_raised_it():
    assert library_of("/usr/lib/python3/site-packages/sklearn/utils/deprecation.py") == "sklearn"
    assert library_of("/venv/lib/python3.11/dist-packages/anndata/_io/h5ad.py") == "anndata"
    assert library_of("/home/me/my_selector.py") == "my_selector"


def test_a_hook_left_in_place_by_another_threads_catch_warnings_never_calls_itself():
    """scikit-learn's catch_warnings in one thread can put the counting hook back after the
    last count ended; the next count must not take the hook for what it passes warnings on to."""
    import warnings

    from ensstab_dask.real import selectors

    saved = warnings.showwarning
    try:
        warnings.showwarning = selectors._counting_showwarning  # as a late catch_warnings restores it
        with selectors.convergence_counted():
            pass
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            warnings.warn("after the counts", UserWarning, stacklevel=1)
        assert [str(w.message) for w in seen] == ["after the counts"]
        # Passed on, not to itself (which recursed without end).
        selectors._counting_showwarning("shown, not counted", UserWarning, __file__, 1, file=io.StringIO())
    finally:
        warnings.showwarning = saved
