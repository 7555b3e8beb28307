"""A small data-parallel PyTorch job over gloo, as users write them: env:// initialisation from the
variables the agent sets, a checkpoint every few steps in TRAINYARD_CHECKPOINT_DIR, and a resume
from TRAINYARD_RESUME_FROM. Standard library and torch only.

    python3 ddp_train.py STEPS [STEP_SECONDS [HANG]]

HANG makes RANK 1 hang after the step it names, having printed the wall clock (`last_line_at_ms=`):
`sleep:12` sleeps for ever in the job's own code, `stop:12` stops itself (SIGSTOP). The other ranks
then wait for it in their next all-reduce, as a real hang looks.

With REPORT_PROGRESS=1 in its environment it reports each step (and its loss) and its checkpoints
through the `trainyard` module; without, it says nothing but its output, as most scripts.
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist


def hang_here(how: str) -> None:
    print(f"last_line_at_ms={int(time.time() * 1000)}", flush=True)
    if how == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    while True:
        time.sleep(3600)


def main() -> None:
    reporting = os.environ.get("REPORT_PROGRESS") == "1"
    if reporting:
        import trainyard
    steps = int(sys.argv[1])
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    hang, _, hang_step = (sys.argv[3] if len(sys.argv) > 3 else "").partition(":")
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    start = 0
    resume = os.environ.get("TRAINYARD_RESUME_FROM")
    if resume:
        state = torch.load(os.path.join(resume, "model.pt"))
        model.module.load_state_dict(state["model"])
        start = state["step"]
        print(f"rank {rank} resumed from step {start}", flush=True)
    generator = torch.Generator().manual_seed(1000 + rank)
    for step in range(start + 1, steps + 1):
        x = torch.randn(16, 8, generator=generator)
        loss = ((model(x) - x.sum(dim=1, keepdim=True)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"rank {rank}/{world} local {os.environ['LOCAL_RANK']} step {step} loss {loss.item():.4f}", flush=True)
        if reporting:
            trainyard.report(step, loss=loss.item())
        checkpoint_dir = os.environ.get("TRAINYARD_CHECKPOINT_DIR")
        if rank == 0 and checkpoint_dir and step % 5 == 0:
            # Written aside and renamed, so that a resume never reads half a checkpoint.
            partial = os.path.join(checkpoint_dir, f".partial-{step:010d}")
            os.makedirs(partial, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "step": step}, os.path.join(partial, "model.pt"))
            os.rename(partial, os.path.join(checkpoint_dir, f"step-{step:010d}"))
            if reporting:
                trainyard.checkpoint_written(os.path.join(checkpoint_dir, f"step-{step:010d}"), step)
        if rank == 1 and hang and step == int(hang_step):
            hang_here(hang)
        time.sleep(pause)
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    print(f"rank {rank} done: sum of ranks {int(total.item())}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
