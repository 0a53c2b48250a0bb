"""Ways to start the "weft" backend: init methods env://, tcp://, file://, an explicit store;
ranks started one by one or by mpirun; subgroups (dist.new_group) with their own weft
communicators, run interleaved with the default group; destroy_process_group and a new group.

--mode env|tcp|file|store   --launcher spawn|mpirun
"""

import os
import socket

import harness


def free_port():
    """A free TCP port below the kernel's ephemeral range: a port bound to 0 and closed comes from
    that range, and before the ranks' store binds it (seconds, while Python imports torch) any
    process's outgoing connection or listener bound to port 0 may take it."""
    import random
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        if port == 29500:  # the example's (torchrun's) default port, which its test uses
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free TCP port below %d" % low)


def worker(args):
    import datetime

    import torch
    import torch.distributed as dist

    import weft_torch

    rank, n = args.rank, args.world_size
    timeout = datetime.timedelta(seconds=60)
    port = int(os.environ["MASTER_PORT"])
    if args.mode == "env":
        # What a launcher sets; under mpirun the script maps Open MPI's variables itself.
        os.environ.setdefault("RANK", str(rank))
        os.environ.setdefault("WORLD_SIZE", str(n))
        dist.init_process_group("weft", timeout=timeout)
    elif args.mode == "tcp":
        dist.init_process_group("weft", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=n,
                                timeout=timeout)
    elif args.mode == "file":
        dist.init_process_group("weft", init_method=args.init_method, rank=rank, world_size=n, timeout=timeout)
    else:
        store = dist.TCPStore("127.0.0.1", port, n, rank == 0, timeout)
        dist.init_process_group("weft", store=store, rank=rank, world_size=n, timeout=timeout)
    assert dist.get_rank() == rank and dist.get_world_size() == n
    assert dist.get_backend() == weft_torch.BACKEND

    def total(ranks):
        return float(sum(r + 1 for r in ranks))

    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.all(t == total(range(n))), t[:4]

    # Subgroups: every rank calls new_group for every group (PyTorch's rule); members get a
    # weft communicator of their own.
    evens = [r for r in range(n) if r % 2 == 0]
    odds = [r for r in range(n) if r % 2 == 1]
    group_evens = dist.new_group(evens)
    group_odds = dist.new_group(odds) if odds else None
    reversed_all = dist.new_group(list(reversed(range(n))))
    mine = evens if rank % 2 == 0 else odds
    group = group_evens if rank % 2 == 0 else group_odds
    for step in range(3):  # interleaved with the default group and with each other
        t = torch.full((100,), float(rank + 1))
        dist.all_reduce(t, group=group)
        assert torch.all(t == total(mine)), (step, t[:4])
        assert dist.get_world_size(group) == len(mine)
        b = torch.full((10,), float(rank))
        dist.broadcast(b, src=mine[-1], group=group)
        assert torch.all(b == float(mine[-1])), b
        t = torch.full((10,), float(rank + 1))
        dist.all_reduce(t, group=reversed_all)
        assert torch.all(t == total(range(n)))
        dist.all_reduce(t)
    dist.barrier()
    dist.destroy_process_group()
    print("rank %d: init %s, launcher %s, %d-rank group and subgroups %s / %s work" % (
        rank, args.mode, args.launcher, n, evens, odds))


def extra(p):
    p.add_argument("--mode", choices=["env", "tcp", "file", "store"], required=True)


if __name__ == "__main__":
    if "MASTER_PORT" not in os.environ:
        os.environ["MASTER_PORT"] = str(free_port())  # inherited by the ranks
    harness.main(worker, extra_args=extra)
