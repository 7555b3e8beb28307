"""Report training progress, metrics, phases and checkpoints to Trainyard. Standard library only.

Every command job finds this module on its PYTHONPATH (the agent puts it there). Each call appends
one JSON line to the process's TRAINYARD_PROGRESS_FILE (the format: README "Reporting progress and
metrics"); outside Trainyard, where that variable is unset, every call does nothing.

    import trainyard
    for step in range(start, steps + 1):
        ...
        trainyard.report(step, loss=loss.item(), lr=scheduler.get_last_lr()[0], samples_per_s=rate)
        if step % 100 == 0:
            with trainyard.phase("checkpoint"):
                path = trainyard.checkpoint_dir(step)
                save(model, path)
            trainyard.checkpoint_written(path, step)

Steps feed stuck detection (a rank that stops advancing), stragglers (per-rank step time), the
job's step count, and, from RANK 0, the metrics the API and the job page chart (loss, lr,
grad_norm, param_norm, samples_per_s). A phase named for a checkpoint or a save counts as
checkpoint time in goodput, and is allowed its own learned time before it is called a hang. Once
RANK 0 calls checkpoint_written, only the checkpoints it announces become resume points.
"""
import contextlib
import json
import math
import os
import threading
import time

__all__ = ["report", "phase", "checkpoint_written", "checkpoint_dir"]

_METRICS = ("loss", "lr", "grad_norm", "param_norm", "samples_per_s")
_lock = threading.Lock()
_file = None
_phase = ""


def _write(record):
    global _file
    path = os.environ.get("TRAINYARD_PROGRESS_FILE")
    if not path:
        return
    line = json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"
    with _lock:
        if _file is None:
            _file = open(path, "a", encoding="utf-8")
        _file.write(line)
        _file.flush()


def _number(value):
    value = float(value)
    return value if math.isfinite(value) else None  # null: measured, and not a number


def report(step, loss=None, lr=None, **metrics):
    """Step `step` (an int, 1-based, absolute across resumes) is done, with what was measured."""
    record = {"step": int(step)}
    if _phase:
        record["phase"] = _phase
    values = dict(metrics, loss=loss, lr=lr)
    for name in _METRICS:
        if values.get(name) is not None:
            record[name] = _number(values[name])
    _write(record)


@contextlib.contextmanager
def phase(name):
    """The enclosed code is phase `name` ("checkpoint", "eval", "save", ...)."""
    global _phase
    outer = _phase
    _phase = str(name)
    _write({"phase": _phase})
    started = time.monotonic()
    try:
        yield
    finally:
        _phase = outer
        _write({"phase": outer, "phase_ended": str(name), "seconds": round(time.monotonic() - started, 3)})


def checkpoint_dir(step):
    """Where the checkpoint of `step` goes: TRAINYARD_CHECKPOINT_DIR/step-<step, ten digits>."""
    return os.path.join(os.environ.get("TRAINYARD_CHECKPOINT_DIR", "."), "step-%010d" % int(step))


def checkpoint_written(path, step):
    """The checkpoint of `step` is complete at `path` (a checkpoint_dir(step) is a resume point)."""
    _write({"checkpoint_written": os.fspath(path), "step": int(step)})
