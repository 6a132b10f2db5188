"""Run an ensstab estimate on SLURM workers started by dask-jobqueue.

Run it on a login node, in the same environment as the workers (the ``cluster`` extra
pins dask and distributed)::

    pip install 'ensstab_dask[cluster]' dask-jobqueue
    cp deploy/slurm/jobqueue.yaml ~/.config/dask/     # and edit it
    python deploy/slurm/slurm_cluster.py --jobs 4 --data $ENSSTAB_DATA_DIR/colon.mat

``--print-job-script`` shows the batch script SLURM would get, and submits nothing.
"""

from __future__ import annotations

import argparse


def make_cluster(jobs: int):
    from dask_jobqueue import SLURMCluster

    # Everything else (cores, memory, partition, environment) comes from jobqueue.yaml.
    cluster = SLURMCluster()
    if jobs:
        cluster.scale(jobs=jobs)
    return cluster


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="SLURM jobs to start (default 2)")
    parser.add_argument("--data", help="dataset (.mat, .npz, .csv, .h5ad); default: the embedded default")
    parser.add_argument("--label", default=None, help="the label column of a .csv, or the obs column of a .h5ad")
    parser.add_argument("--n-target", type=int, default=20)
    parser.add_argument("--print-job-script", action="store_true", help="print the job script and exit")
    args = parser.parse_args(argv)

    if args.print_job_script:
        cluster = make_cluster(0)
        print(cluster.job_script())
        cluster.close()
        return 0

    from distributed import Client

    import ensstab_dask as es
    from ensstab_dask.real.datasets import load_dataset, make_microarray

    data = load_dataset(args.data, label=args.label) if args.data else make_microarray(seed=0)
    with make_cluster(args.jobs) as cluster, Client(cluster) as client:
        client.wait_for_workers(1, timeout=600)
        est = es.estimate(data.X, data.y, args.n_target, client=client)
    print(est.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
