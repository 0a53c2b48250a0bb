"""Failures on the "weft" backend end in Python exceptions, within bounded time, never a hang.

--scenario kill      the last rank kills itself (SIGKILL) after a few allreduces; every other
                     rank's next allreduce raises within seconds, naming the dead rank
--scenario timeout   rank 1 stays alive but skips an allreduce; rank 0's raises once the group's
                     timeout (3 s) has passed, its later operations fail at once, and rank 1's
                     next operation fails too (rank 0 aborted the communicator)
--scenario init      rank 1 never joins; rank 0's init_process_group raises after the timeout
--scenario exit      rank 0 queues async allreduces and leaves without waiting for them or
                     destroying the group; at interpreter exit they still run (weft_torch's
                     atexit hook, or the group's destructor, whichever comes first) and rank 0
                     says goodbye, so the others' complete with the right sums
"""

import os
import signal
import time

import harness

TIMEOUT_S = 3.0
KILL_LIMIT_S = 10.0  # generous on a loaded 2-core machine; weft reports a dead peer in milliseconds


def expect_raise(what, call, needles, low=0.0, high=None):
    start = time.monotonic()
    try:
        call()
    except RuntimeError as e:
        elapsed = time.monotonic() - start
        text = str(e)
        missing = [s for s in needles if s not in text]
        if missing:
            raise SystemExit("%s: the error does not say %s: %s" % (what, missing, text))
        if elapsed < low or (high is not None and elapsed > high):
            raise SystemExit("%s: raised after %.2f s, expected between %.1f and %s s" % (what, elapsed, low, high))
        print("%s: raised after %.2f s: %s" % (what, elapsed, text.splitlines()[0]))
        return
    raise SystemExit("%s: no error" % what)


def worker(args):
    import datetime

    import torch
    import torch.distributed as dist

    import weft_torch  # noqa: F401

    rank, n = args.rank, args.world_size
    timeout = datetime.timedelta(seconds=TIMEOUT_S if args.scenario in ("timeout", "init") else 60)
    if args.scenario == "init":
        if rank != 0:
            return  # never joins
        expect_raise("init_process_group without rank 1",
                     lambda: dist.init_process_group("weft", init_method=args.init_method, rank=rank, world_size=n,
                                                     timeout=timeout),
                     ["weft", "rank 0 of %d" % n, "did not all join"], low=TIMEOUT_S * 0.9, high=TIMEOUT_S + 10)
        return

    dist.init_process_group("weft", init_method=args.init_method, rank=rank, world_size=n, timeout=timeout)
    if args.scenario == "exit":
        tensors = [torch.full((1 << 20,), float(k)) for k in range(8)]
        works = [dist.all_reduce(t, async_op=True) for t in tensors]
        if rank == 0:
            return  # no wait, no destroy_process_group: the interpreter exits
        for k, (w, t) in enumerate(zip(works, tensors)):
            w.wait()
            if not torch.all(t == float(k * n)):
                raise SystemExit("allreduce %d: %s, expected %d" % (k, t[:4].tolist(), k * n))
        print("rank %d: all 8 allreduces completed after rank 0 left" % rank)
        return
    t = torch.ones(1 << 16)
    for _ in range(3):
        dist.all_reduce(t)

    if args.scenario == "kill":
        dead = n - 1
        if rank == dead:
            os.kill(os.getpid(), signal.SIGKILL)
        expect_raise("all_reduce after rank %d died" % dead, lambda: dist.all_reduce(t), ["weft", "rank %d" % dead],
                     high=KILL_LIMIT_S)
        expect_raise("the next all_reduce", lambda: dist.all_reduce(t), ["weft"], high=KILL_LIMIT_S)
        work = dist.all_reduce(t, async_op=True)
        expect_raise("an async all_reduce's wait", work.wait, ["weft"], high=KILL_LIMIT_S)
        return

    # timeout
    store = dist.distributed_c10d._get_default_store()
    if rank == 0:
        expect_raise("all_reduce that rank 1 skips", lambda: dist.all_reduce(t),
                     ["weft", "rank 0 of %d" % n, "did not complete within %d ms" % (TIMEOUT_S * 1000)],
                     low=TIMEOUT_S * 0.9, high=TIMEOUT_S + 10)
        expect_raise("the next all_reduce", lambda: dist.all_reduce(t), ["weft", "was aborted"], high=2)
        store.set("rank0 done", "1")
    else:
        store.wait(["rank0 done"], datetime.timedelta(seconds=60))
        expect_raise("rank 1's all_reduce after rank 0 aborted", lambda: dist.all_reduce(t), ["weft", "rank 0"],
                     high=KILL_LIMIT_S)


def expect(results, args):
    # In the kill scenario the last rank dies by SIGKILL; every other rank must succeed.
    return all(rc == 0 or (args.scenario == "kill" and rank == args.world_size - 1 and rc == -signal.SIGKILL)
               for rank, rc, _ in results)

if __name__ == "__main__":
    harness.main(worker, extra_args=lambda p: p.add_argument("--scenario", choices=["kill", "timeout", "init", "exit"],
                                                              required=True),
                 expect=expect)
