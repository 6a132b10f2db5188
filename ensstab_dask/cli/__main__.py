"""``python -m ensstab_dask.cli``: the ``ensstab`` command."""

from . import main

raise SystemExit(main())
