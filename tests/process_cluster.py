"""A real scheduler and workers started by deploy/local/start-cluster.sh (shared by the
tests that need processes over TCP)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = ROOT / "deploy" / "local" / "start-cluster.sh"
STOP = ROOT / "deploy" / "local" / "stop-cluster.sh"
MAKE_CERTS = ROOT / "deploy" / "tls" / "make-certs.sh"


def _env() -> dict:
    # The workers are separate processes: they must import this checkout's ensstab_dask.
    return dict(os.environ, ENSSTAB_IDLE_TIMEOUT="300s", PYTHONPATH=str(ROOT))


class ProcessCluster:
    """A scheduler and workers started by deploy/local/start-cluster.sh."""

    def __init__(self, run_dir: Path, n_workers: int = 2, tls_dir: Path | None = None):
        self.run_dir = run_dir
        cmd = ["bash", str(START), "-n", str(n_workers), "-d", str(run_dir)]
        if tls_dir is not None:
            cmd += ["-t", str(tls_dir)]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=_env(), check=True)
        except BaseException:
            self.stop()
            raise
        self.address = out.stdout.strip().splitlines()[-1]
        assert self.address.startswith(("tcp://127.0.0.1:", "tls://127.0.0.1:")), out.stdout

    def pid(self, role: str) -> int:
        return int((self.run_dir / f"{role}.pid").read_text())

    def stop(self) -> None:
        subprocess.run(["bash", str(STOP), "-d", str(self.run_dir), "-g", "5"], timeout=60, check=False)
