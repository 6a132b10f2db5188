"""deploy/: what can be checked without Docker, Kubernetes or SLURM.

The files parse; every image is the one the Dockerfile builds, at the versions that
pyproject.toml's ``cluster`` extra pins; every command they run exists in the installed
distributed with the options they pass. deploy/local and deploy/tls run for real in
test_cluster_processes.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="pyyaml is in the test extra")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli", reason="Python 3.10 reads pyproject.toml with tomli")

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pins() -> dict[str, str]:
    pins = {}
    for req in PYPROJECT["project"]["optional-dependencies"]["cluster"]:
        name, version = req.split("==")
        pins[name] = version
    return pins


def _dockerfile_args() -> dict[str, str]:
    text = (DEPLOY / "docker" / "Dockerfile").read_text()
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", text, flags=re.M))


def _image() -> str:
    args = _dockerfile_args()
    return f"ensstab-dask:{PYPROJECT['project']['version']}-dask{args['DASK_VERSION']}"


def test_cluster_extra_pins_dask_and_distributed_together():
    pins = _pins()
    assert set(pins) == {"dask", "distributed"}
    assert pins["dask"] == pins["distributed"]


def test_dockerfile_base_image_matches_the_pins():
    args = _dockerfile_args()
    text = (DEPLOY / "docker" / "Dockerfile").read_text()
    assert args["DASK_VERSION"] == _pins()["distributed"]
    assert "FROM ghcr.io/dask/dask:${DASK_VERSION}-py${PYTHON_VERSION}" in text
    # The image's Python satisfies requires-python (">=3.10").
    minimum = tuple(int(x) for x in PYPROJECT["project"]["requires-python"].lstrip(">=").split("."))
    assert tuple(int(x) for x in args["PYTHON_VERSION"].split(".")) >= minimum
    # It installs this checkout, with the cluster extra, from files that exist.
    assert '"/opt/ensstab_dask[cluster]"' in text
    for src in re.findall(r"^COPY (.+) /opt/ensstab_dask/", text, flags=re.M):
        for path in src.split():
            assert (ROOT / path).exists(), path
    assert _image() in text  # the build command in its header names the tag used everywhere


def _flags(command) -> set[str]:
    return {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}


def _check_dask_command(argv: list[str]) -> None:
    """``argv`` is a ``dask scheduler|worker`` call whose options exist in distributed."""
    from distributed.cli import dask_scheduler, dask_worker

    assert argv[0] == "dask", argv
    command = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}[argv[1]]
    for arg in argv[2:]:
        if arg.startswith("--"):
            assert arg.split("=")[0] in _flags(command), f"{' '.join(argv[:2])} has no option {arg}"


def test_compose_file():
    compose = yaml.safe_load((DEPLOY / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"scheduler", "worker", "client"}
    for name, svc in services.items():
        assert svc["image"] == _image(), name
        assert svc["build"]["dockerfile"] == "deploy/docker/Dockerfile"
        assert (DEPLOY / "docker" / svc["build"]["context"] / svc["build"]["dockerfile"]).exists()
    _check_dask_command(services["scheduler"]["command"])
    _check_dask_command(services["worker"]["command"])
    client = services["client"]["command"]
    assert client[0] == "ensstab"
    from ensstab_dask.cli import build_parser

    build_parser().parse_args(client[1:])  # a valid ensstab command line


def test_kubernetes_daskcluster():
    doc = yaml.safe_load((DEPLOY / "kubernetes" / "daskcluster.yaml").read_text())
    assert doc["apiVersion"] == "kubernetes.dask.org/v1" and doc["kind"] == "DaskCluster"
    name = doc["metadata"]["name"]
    for role in ("scheduler", "worker"):
        (container,) = doc["spec"][role]["spec"]["containers"]
        assert container["image"] == _image()
        _check_dask_command(container["args"])
    assert doc["spec"]["scheduler"]["service"]["selector"]["dask.org/cluster-name"] == name
    ports = {p["name"] for p in doc["spec"]["scheduler"]["spec"]["containers"][0]["ports"]}
    assert {p["targetPort"] for p in doc["spec"]["scheduler"]["service"]["ports"]} <= ports


def test_helm_values():
    values = yaml.safe_load((DEPLOY / "kubernetes" / "helm-values.yaml").read_text())
    for role in ("scheduler", "worker"):
        image = values[role]["image"]
        assert f"{image['repository']}:{image['tag']}" == _image()
    assert values["worker"]["resources"]["limits"]["cpu"] == 1  # the chart's --nthreads


def test_slurm_job_script():
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is in the test extra")
    import dask

    config = yaml.safe_load((DEPLOY / "slurm" / "jobqueue.yaml").read_text())
    # Key by key: setting the nested dict would replace jobqueue's own defaults.
    with dask.config.set({f"jobqueue.slurm.{k}": v for k, v in config["jobqueue"]["slurm"].items()}):
        sys.path.insert(0, str(DEPLOY / "slurm"))
        try:
            import slurm_cluster
        finally:
            sys.path.remove(str(DEPLOY / "slurm"))
        cluster = slurm_cluster.make_cluster(0)  # writes a job script, submits nothing
        try:
            script = cluster.job_script()
        finally:
            cluster.close()
    assert "#SBATCH -p compute" in script and "#SBATCH --cpus-per-task=8" in script
    line = next(ln for ln in script.splitlines() if "distributed.cli.dask_worker" in ln)
    assert "--nthreads 1" in line and "--nworkers 8" in line
    # The module the job runs exists in the installed distributed.
    run = subprocess.run([sys.executable, "-m", "distributed.cli.dask_worker", "--help"], capture_output=True)
    assert run.returncode == 0


@pytest.mark.parametrize("script", ["local/start-cluster.sh", "local/stop-cluster.sh", "tls/make-certs.sh"])
def test_shell_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(DEPLOY / script)]).returncode == 0
    assert (DEPLOY / script).stat().st_mode & 0o111, "not executable"


def test_tls_config_names_the_files_make_certs_writes():
    config = yaml.safe_load((DEPLOY / "tls" / "dask-tls.yaml").read_text())
    tls = config["distributed"]["comm"]["tls"]
    made = (DEPLOY / "tls" / "make-certs.sh").read_text()
    assert config["distributed"]["comm"]["require-encryption"] is True
    assert Path(tls["ca-file"]).name == "ca.pem"
    for role in ("scheduler", "worker", "client"):
        assert Path(tls[role]["cert"]).name == f"{role}.pem"
        assert Path(tls[role]["key"]).name == f"{role}-key.pem"
        assert role in made


def test_deploy_readme_covers_every_target():
    text = (DEPLOY / "README.md").read_text()
    for heading in ("Local", "Docker", "Kubernetes", "SLURM", "TLS", "What was run"):
        assert re.search(rf"^#+ .*{heading}", text, flags=re.M | re.I), heading
    assert "dask-scheduler " not in text.replace("`dask-scheduler`", "")  # the removed command is not advised
