"""``python -m ensstab_dask.settings``: write :mod:`ensstab_dask.settings.options` from the
settings' declaration (run it after adding or changing a setting)."""

from pathlib import Path

from ensstab_dask.settings import OPTIONS_MODULE, options_source

if __name__ == "__main__":
    out = Path(__file__).resolve().parents[2] / OPTIONS_MODULE
    out.write_text(options_source())
    print(f"wrote {out}")
