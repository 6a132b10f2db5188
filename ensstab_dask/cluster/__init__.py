"""Where work runs and how tasks run there: the current Dask client, a local cluster, a
cluster by address (:mod:`~ensstab_dask.cluster.clients`); tasks with the data sent once
(:mod:`~ensstab_dask.cluster.tasks`); progress bars and stage clocks
(:mod:`~ensstab_dask.cluster.progress`); one local cluster for several calls
(:mod:`~ensstab_dask.cluster.session`)."""

from ensstab_dask.cluster.clients import (
    BUSY_MACHINE,
    ClientLike,
    busy_machine_config,
    check_address,
    connect,
    current_client,
    local_cluster,
)
from ensstab_dask.cluster.session import Session, session
from ensstab_dask.cluster.tasks import Display, map_shared, run_tasks

__all__ = [
    "BUSY_MACHINE",
    "ClientLike",
    "busy_machine_config",
    "Display",
    "check_address",
    "connect",
    "current_client",
    "local_cluster",
    "map_shared",
    "session",
    "Session",
    "run_tasks",
]
