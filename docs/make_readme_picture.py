"""Regenerate docs/stability_curve.png, the README's picture.

It runs the commands the README shows: the validation harness on the embedded default
(the estimate with its interval, and the naive real check: 1,000 random-forest fits,
about 5 minutes on 2 cores, or none when the naive curve is already in the cache
folder), then the report, and copies the report's stability curve here. The report and
the netCDF are left in docs/readme-report/ (not committed); the naive curve is cached
in benchmarks/.cache/ (not committed either), where benchmarks/bench_validate.py keeps
it too.
"""

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
work = HERE / "readme-report"
work.mkdir(exist_ok=True)
cache = HERE.parent / "benchmarks" / ".cache"
cache.mkdir(exist_ok=True)
result = work / "validation.nc"
cli = [sys.executable, "-m", "ensstab_dask.cli"]
validate = [*cli, "validate", "--cache-dir", str(cache), "--output", str(result), "--overwrite"]
subprocess.run(validate, check=True)
subprocess.run([*cli, "report", str(result), "-o", str(work / "report"), "--overwrite"], check=True)
shutil.copy(work / "report" / "stability_curve.png", HERE / "stability_curve.png")
print(f"wrote {HERE / 'stability_curve.png'}")
