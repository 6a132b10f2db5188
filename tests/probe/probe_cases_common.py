"""The shape of one replayed probe case, shared by the probe's case lists.

Each case list module (``probe_cases_silent``, ``probe_cases_loud``) defines
``CASES: list[Case]``; ``probe_replay`` runs every case in its own temporary
folder and counts the classes its ``run`` returns.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Callable

#: The classes a case's ``run`` may return: a clear one-line error, the right
#: answer, or one of the failures the probe looks for (``signal``: the process was
#: killed by a signal, a crash in C code).
CLASSES = ("error", "right", "silent", "hang", "traceback", "signal", "noisy")

#: The classes that make the replay fail.
FAILING = ("silent", "hang", "traceback", "signal")


@dataclasses.dataclass(frozen=True)
class Case:
    """One probe: its number in the issue, a short name, and how to run it.

    ``run(tmp_dir)`` does the probe inside the empty folder ``tmp_dir`` and
    returns one of `CLASSES`.
    """

    number: int
    name: str
    run: Callable[[pathlib.Path], str]
