"""Independent workers (no collective: each rank keeps its own pace) that report through the
`trainyard` module the agent puts on every job's PYTHONPATH. Standard library only.

    python3 report_train.py STEPS STEP_SECONDS [CHECKPOINT_EVERY [SLOW_RANK SLOW_FACTOR]]

Every rank reports each step with its loss, learning rate and throughput; SLOW_RANK's steps take
SLOW_FACTOR times as long. Every CHECKPOINT_EVERY steps (0: never) RANK 0 writes a checkpoint inside
trainyard.phase("checkpoint") and announces it; after its first it also leaves a step directory it
never announces, as a half-written one would be, which must not become a resume point.
"""
import os
import sys
import time

import trainyard


def main() -> None:
    steps, pause = int(sys.argv[1]), float(sys.argv[2])
    every = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    slow_rank = int(sys.argv[4]) if len(sys.argv) > 4 else -1
    factor = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    rank = int(os.environ["RANK"])
    for step in range(1, steps + 1):
        time.sleep(pause * (factor if rank == slow_rank else 1.0))
        trainyard.report(step, loss=1.0 / step, lr=0.01, samples_per_s=100.0 * (rank + 1))
        if rank == 0 and every and step % every == 0:
            with trainyard.phase("checkpoint"):
                path = trainyard.checkpoint_dir(step)
                os.makedirs(path, exist_ok=True)
                with open(os.path.join(path, "state.txt"), "w", encoding="utf-8") as state:
                    state.write(str(step))
                time.sleep(0.1)
            trainyard.checkpoint_written(path, step)
            if step == every:
                os.makedirs(trainyard.checkpoint_dir(steps + 100), exist_ok=True)
    print(f"rank {rank} done after {steps} steps", flush=True)


if __name__ == "__main__":
    main()
