"""Settings every test starts from, before any test reads them."""

from __future__ import annotations

import os

# Offline folds run on the event loop in tests unless a test asks for a worker process
# (`tests/memory/fold/test_offload.py`, `tests/bot/test_fold_workers.py`): starting one
# costs about a second of CPU, and most tests fold. Bots started as subprocesses get a
# user's environment, so the default (one worker) there.
os.environ.setdefault("VENTANA_FOLD_WORKERS", "0")
