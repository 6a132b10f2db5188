"""Regenerate docs/stability_curve.png, the README's picture (about 10 minutes on 2 cores).

It runs the commands the README shows: the estimate on the embedded default with the
calibration and the naive real check (1,500 random-forest fits), then the report, and
copies the report's stability curve here. The report and the netCDF are left in
docs/readme-report/ (not committed).
"""

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
work = HERE / "readme-report"
work.mkdir(exist_ok=True)
result = work / "estimate.nc"
cli = [sys.executable, "-m", "ensstab_dask.cli"]
subprocess.run([*cli, "estimate", "--calibrate", "--validate", "--output", str(result), "--overwrite"], check=True)
subprocess.run([*cli, "report", str(result), "-o", str(work / "report"), "--overwrite"], check=True)
shutil.copy(work / "report" / "stability_curve.png", HERE / "stability_curve.png")
print(f"wrote {HERE / 'stability_curve.png'}")
