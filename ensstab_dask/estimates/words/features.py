"""The stable features in words: what the answer says after the curve.

The features an ensemble of the largest measured size keeps on nearly every rerun
(:func:`~ensstab_dask.estimates.stages.features.stable_features`), how many of them chance alone
would put there at the copies measured (a bound said to say nothing when it is not below
the list's length), and the copies, and the cutoff where it must change, that bound that
number by 1 or by the PFER asked for.
"""

from __future__ import annotations

import math

from ensstab_dask.estimates.records.parts import EstimateFields
from ensstab_dask.estimates.stages.features import stable_features
from ensstab_dask.wording import Code, Param, Spelling

__all__ = ["kept_features", "BOUND_WORDS"]


#: The most names the plain answer lists; the feature table has them all.
_NAMES = 20


def kept_features(est: EstimateFields) -> list[str]:
    """The features an ensemble of the largest measured size keeps on nearly every rerun,
    how many of them chance alone would put there (none without copies), and the copies
    that bound that by 1 (or by the PFER asked for)."""
    if est.features is None:
        return []
    st = stable_features(est.features)
    G, m = st["copies"], st["m_ensemble"]
    least = math.ceil(st["threshold"] * G - 1e-9)
    what = (
        f"Kept on at least {st['threshold']:.0%} of reruns ({least} or more of {G} real ensembles of {m}, each on its "
        "own half)"
    )
    if not st["names"]:
        times = round(st["most_frequent_frequency"] * G)
        return [f"  {what}: none; the most often kept, {st['most_frequent']}, by {times} of {G}."] + _pfer_cutoff(st)
    names = ", ".join(st["names"][:_NAMES]) + (
        f" and {len(st['names']) - _NAMES} more (the feature table lists them all)" if len(st["names"]) > _NAMES else ""
    )
    count = f"{len(st['names'])} feature" + ("" if len(st["names"]) == 1 else "s")
    return [f"  {what}: {names} ({count}{_chance(st)})."] + _pfer_cutoff(st) + _advice(st, est.verdict.spelling)


def _chance(st: dict) -> str:
    """How many of the stable features chance alone would put there: the bound at these
    copies (said to say nothing when it is not below the list's length), and Meinshausen
    and Buhlmann's at the cutoff (infinitely many copies, R's stabs' PFER)."""
    bound, mb, listed = st["expected_false_at_most"], st.get("mb_pfer"), len(st["names"])
    if bound is None:
        return ""
    if round(bound, 1) >= listed:  # as printed: "3.0 of 3" says nothing either
        return (
            f"; with {st['copies']} real ensembles the bound on how many of them are noise, {bound:.1f}, is not below "
            f"{listed}: it says nothing here"
        )
    said = f"; at most {bound:.1f} of them are expected to be noise with these {st['copies']} real ensembles"
    return said + ("" if mb is None else f", {mb:.3g} with infinitely many (R's stabs' PFER, {BOUND_WORDS})")


#: Whose bound the stable features' noise count is.
BOUND_WORDS = "Meinshausen and Buhlmann's bound"


def _pfer_cutoff(st: dict) -> list[str]:
    """For a PFER asked for, the cutoff it sets, as R's stabs does."""
    if st.get("pfer") is None:
        return []
    return [
        f"  The cutoff {st['threshold']:.4g} is that of {BOUND_WORDS} for a PFER of {st['pfer']:g}, as R's stabs "
        "sets it: it holds only with infinitely many real ensembles."
    ]


def _advice(st: dict, spelling: Spelling) -> list[str]:
    """The copies (and cutoff) that bound the stable features' noise by the PFER asked for,
    or by 1, at finitely many copies; nothing where these copies already do."""
    pfer, target, G = st.get("pfer"), st["bound_target"], st["copies"]
    needed, cutoff = st.get("copies_needed"), st.get("copies_needed_cutoff")
    if needed is None:
        return [f"  No cutoff of 0.55, 0.60, ..., 1 bounds the noise by {target:g} within 500 real ensembles."]
    same_cutoff = abs(cutoff - st["threshold"]) < 1e-9
    instead = " (in place of the PFER)" if pfer is not None else ""
    at_cutoff = spelling(Param("cutoff", Code(f"{cutoff:g}")))
    if needed <= G:  # these copies do it at another cutoff
        return [] if same_cutoff else [f"  To bound the noise among them by {target:g}, pass {at_cutoff}{instead}."]
    how = f"pass {spelling(Param('copies', needed))}" + ("" if same_cutoff else f" with {at_cutoff}")
    return [
        f"  To bound the noise among them by {target:g}, {how}{instead}: {needed} real ensembles, the {G} already "
        "made reused, priced before it runs; the list may shrink, as more ensembles tell chance from stability."
    ]
