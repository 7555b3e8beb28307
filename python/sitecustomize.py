# Trainyard's sitecustomize, first on every command job's PYTHONPATH (the agent puts it there):
# when the agent finds a rank idle, it sends TRAINYARD_STACKS_SIGNAL, and faulthandler writes every
# thread's Python stack to TRAINYARD_STACKS_FILE, so a hang is diagnosed with where each rank was,
# without a change to the job's code. Standard library only; then the next sitecustomize on the path
# (the distribution's) runs as it would have without this one.
import os


def _register_stack_dumps():
    path = os.environ.get("TRAINYARD_STACKS_FILE")
    signal_number = os.environ.get("TRAINYARD_STACKS_SIGNAL")
    if not path or not signal_number:
        return None
    try:
        import faulthandler
        # Kept open for the life of the process: faulthandler writes to its descriptor from the
        # signal handler.
        stacks = open(path, "a", encoding="utf-8")
        faulthandler.register(int(signal_number), file=stacks, all_threads=True, chain=False)
        return stacks
    except (OSError, ValueError, RuntimeError):
        return None


def _run_next_sitecustomize():
    import importlib.machinery
    import importlib.util
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # as site.py does with a failing sitecustomize: the job still runs
        pass


_trainyard_stacks_file = _register_stack_dumps()
_run_next_sitecustomize()
