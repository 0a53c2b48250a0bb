#!/usr/bin/env python3
"""Train a small model with DistributedDataParallel on weft (CPU tensors).

The backend is one word: --backend weft (the default) or --backend gloo runs the very same
script. Start the ranks in any of these ways (from the repository root, after building):

    # this script starts N local ranks itself (env:// with MASTER_ADDR/MASTER_PORT)
    PYTHONPATH=build/python /usr/bin/python3 integrations/torch/examples/train_ddp.py --nproc 4

    # one command per rank, as any env:// launcher does
    RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 PYTHONPATH=build/python python3 train_ddp.py &
    RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 PYTHONPATH=build/python python3 train_ddp.py

    # Open MPI starts the ranks (the script reads OMPI_COMM_WORLD_RANK/SIZE)
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 mpirun -np 4 -x PYTHONPATH=build/python python3 train_ddp.py
"""

import argparse
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch  # noqa: F401  registers the "weft" backend


def launch_local(nproc):
    """Starts `nproc` copies of this script as ranks 0..nproc-1 and waits for them."""
    # torchrun's default port, or MASTER_PORT when set.
    port = int(os.environ.get("MASTER_PORT", "29500"))
    argv = [a for a in sys.argv[1:]]
    i = argv.index("--nproc")
    del argv[i:i + 2]
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv, env=env))
    return max(p.wait() for p in procs)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="weft", help="torch.distributed backend: weft or gloo")
    p.add_argument("--nproc", type=int, help="start this many local ranks")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    if args.nproc:
        sys.exit(launch_local(args.nproc))
    for ompi, var in (("OMPI_COMM_WORLD_RANK", "RANK"), ("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE")):
        if ompi in os.environ:
            os.environ.setdefault(var, os.environ[ompi])

    dist.init_process_group(args.backend)  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.Generator().manual_seed(rank)  # each rank trains on its own batches
    target = torch.randn(64, 10, generator=torch.Generator().manual_seed(42))
    start = time.perf_counter()
    for step in range(args.steps):
        x = torch.randn(32, 64, generator=data)
        loss = torch.nn.functional.mse_loss(model(x), target[:32])
        optimizer.zero_grad()
        loss.backward()  # DDP averages the gradients over the ranks here, on the chosen backend
        optimizer.step()
        if rank == 0 and (step % 5 == 0 or step == args.steps - 1):
            print("step %3d  loss %.4f" % (step, loss.item()), flush=True)
    # Every rank ends with the same weights: check it with one more collective.
    checksum = torch.tensor([sum(p.double().sum().item() for p in model.parameters())], dtype=torch.float64)
    low, high = checksum.clone(), checksum.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    if rank == 0:
        print("%d ranks on %s: %d steps in %.2f s; weights equal on every rank: %s" % (
            world, args.backend, args.steps, time.perf_counter() - start, bool(low == high)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
