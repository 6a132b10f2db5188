"""The estimates of several selectors on one data (:func:`~ensstab_dask.compare`), side
by side: one record per selector in the JSON, a ``selector`` dimension in the Dataset."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import xarray as xr

from ensstab_dask.estimates.records.estimate import Estimate, stack_estimates
from ensstab_dask.estimates.words.choice import choice_sentences
from ensstab_dask.outputs import json_number
from ensstab_dask.outputs.visible import visible
from ensstab_dask.wording import Spelling

__all__ = ["SelectorComparison"]


@dataclass(frozen=True)
class SelectorComparison:
    """An estimate per selector, their real runs sent in one submission.

    Attributes
    ----------
    estimates : dict of str to Estimate
        Each selector's estimate, by the name it was given.
    seconds : float
        The wall time of the one submission of every selector's real runs not cached.

    Examples
    --------
    >>> import ensstab_dask as es
    >>> data = es.make_microarray(n_feature=100, n_informative=10, effect=3.0, seed=1)
    >>> res = es.compare(data.X, data.y, 5, selectors=["f-test", "l1-logistic"], m_ensemble=(1, 3), n_boot=0,
    ...                  predictor="logistic", client="synchronous", progress=False)
    >>> sorted(res.to_dict()["selectors"]["f-test"])[:4]
    ['accuracy', 'curve', 'curve_interval', 'reliable']
    >>> res.to_dataset()["accuracy"].dims
    ('selector', 'm_measured')
    """

    estimates: dict[str, Estimate]
    seconds: float = float("nan")

    @property
    def selectors(self) -> list[str]:
        return list(self.estimates)

    def choice(self) -> list[str]:
        """Which selector and size, in two sentences (:mod:`~ensstab_dask.estimates.words.choice`)."""
        return choice_sentences(self.estimates)

    def spelled(self, spelling: Spelling) -> SelectorComparison:
        """Every estimate with its words in ``spelling`` (:meth:`Estimate.spelled`)."""
        return dataclasses.replace(self, estimates={k: e.spelled(spelling) for k, e in self.estimates.items()})

    def summary(self) -> str:
        """The choice, then one line per selector: its curve, accuracy and cost."""
        lines = [*self.choice(), ""]
        for name, est in self.estimates.items():
            curve = ", ".join(f"m={m}: {v:.3f}" for m, v in est.predicted().items())
            acc = ""
            if est.accuracy is not None:
                a = est.accuracy
                acc = "; accuracy " + ", ".join(
                    f"m={int(m)}: {v:.2f} (SE {se:.2f})"
                    for m, v, se in zip(a["m_measured"].values, a["accuracy"].values, a["accuracy_se"].values)
                )
            runs = est.cost.runs
            lines.append(
                f"{name}: {'reliable' if est.reliable else 'NOT reliable'}; stability {curve}{acc}; "
                f"{runs.made} real runs made, {runs.reused} reused, {est.cost.seconds_as_made():.1f} s"
            )
        # Names from the user (a selector's) with their control characters made visible, as
        # an estimate's summary shows the data's names.
        return visible("\n".join(lines), keep="\n")

    def to_dict(self) -> dict:
        """A record per selector under ``selectors`` (``curve``, ``curve_interval``,
        ``accuracy`` by size, ``runs_made``, ``runs_reused``, ``seconds``, ``reliable``,
        ``warnings``, ``selector``), the ``choice`` sentences and the submission's ``seconds``."""
        records = {}
        for name, est in self.estimates.items():
            d = est.to_dict()
            records[name] = {
                "selector": est.settings["selector"],
                "curve": d["curve"],
                "curve_interval": d.get("curve_interval", {}),
                "accuracy": d.get("accuracy"),
                "runs_made": est.cost.runs.made,
                "runs_reused": est.cost.runs.reused,
                "seconds": json_number(est.cost.seconds_as_made()),
                "reliable": est.reliable,
                "warnings": list(est.warnings),
            }
        return {"selectors": records, "choice": self.choice(), "seconds": json_number(self.seconds)}

    def to_dataset(self) -> xr.Dataset:
        """Every selector's :meth:`Estimate.to_dataset` along a ``selector`` dimension; the
        attributes those every selector has with one value."""
        ds = stack_estimates(self.estimates, "selector", long_name="selector")
        ds.attrs.update(kind="selector_comparison", choice="\n".join(self.choice()))
        return ds
