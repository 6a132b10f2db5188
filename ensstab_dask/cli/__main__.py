"""``python -m ensstab_dask.cli``: the ``ensstab`` command."""

from ensstab_dask.cli import main

raise SystemExit(main())
