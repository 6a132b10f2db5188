"""``python -m ensstab_dask.settings``: write :mod:`ensstab_dask.settings.options` and
:mod:`ensstab_dask.models.model_settings` from the settings' declaration (run it after adding
or changing a setting)."""

from pathlib import Path

from ensstab_dask.settings import MODEL_SETTINGS_MODULE, OPTIONS_MODULE, model_settings_source, options_source

if __name__ == "__main__":
    root = Path(__file__).resolve().parents[2]
    for module, source in ((OPTIONS_MODULE, options_source()), (MODEL_SETTINGS_MODULE, model_settings_source())):
        (root / module).write_text(source)
        print(f"wrote {root / module}")
