#!/usr/bin/env python3
"""weft's torch.distributed backend against Gloo: the same script, the backend word switched.

    allreduce   dist.all_reduce of float32, 8 B and 1 KiB .. 256 MiB, on N processes: time per
                call (the slowest rank's mean) and busbw (nccl-tests' factor 2(n-1)/n)
    ddp         DistributedDataParallel steps of a ~25M-parameter MLP (ResNet-50's gradient
                size): step time, and the share of it spent communicating (step time minus the
                same step under no_sync(), which skips the allreduces; the two kinds of step
                alternate, medians of --steps each), and the same gradients' allreduces alone
                (25 MiB buckets, as DDP's)

Each (backend, N) pair is a fresh job of N processes on this machine (env://), run one after
the other: weft, then gloo, for each N; with --rounds R, R jobs each in alternating order,
keeping the best (a shared machine's load comes and goes). Usage (from the repository root, after building):

    PYTHONPATH=build/python /usr/bin/python3 bench/torch/torch_backend_bench.py allreduce --np 2,4
    PYTHONPATH=build/python /usr/bin/python3 bench/torch/torch_backend_bench.py ddp --np 2,4
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

BACKENDS = ["weft", "gloo"]


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B") or "0"
    return int(text[:-1]) * units[text[-1]] if text[-1] in units and text[-1].isalpha() else int(text)


def human(nbytes):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return "%d %s" % (nbytes >> shift, unit)
    return "%d B" % nbytes


# ---- one rank ------------------------------------------------------------------------------

def rank_main(args):
    import torch
    import torch.distributed as dist

    import weft_torch  # noqa: F401

    torch.set_num_threads(1)
    dist.init_process_group(args.backend)
    rank, n = dist.get_rank(), dist.get_world_size()
    result = allreduce_sweep(args, torch, dist, n) if args.what == "allreduce" else ddp_steps(args, torch, dist)
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def slowest(torch, dist, seconds):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def allreduce_sweep(args, torch, dist, n):
    rows = []
    for size in args.sizes:
        t = torch.ones(max(1, size // 4), dtype=torch.float32)
        # Enough calls for ~0.3 s of the first estimate, at least 3 and at most 1000.
        for _ in range(2):
            dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        estimate = slowest(torch, dist, time.perf_counter() - start)
        iters = int(min(1000, max(3, 0.3 / max(estimate, 1e-6))))
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        per_call = slowest(torch, dist, (time.perf_counter() - start) / iters)
        rows.append({"bytes": size, "us": per_call * 1e6, "iters": iters})
    return rows


def ddp_steps(args, torch, dist):
    import statistics

    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    width, layers = 2048, 6  # 6 x (2048 x 2048 + 2048) = 25.2M parameters
    model = torch.nn.Sequential(*[m for _ in range(layers) for m in (torch.nn.Linear(width, width), torch.nn.ReLU())])
    ddp = DDP(model, gradient_as_bucket_view=args.bucket_view)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    x = torch.randn(args.batch, width)

    def cpu():
        t = os.times()
        return t.user + t.system  # this process's threads, the backend's included

    def step(sync):
        start, start_cpu = time.perf_counter(), cpu()
        opt.zero_grad()
        if sync:
            ddp(x).square().mean().backward()
        else:
            with ddp.no_sync():
                ddp(x).square().mean().backward()
        opt.step()
        return [time.perf_counter() - start, cpu() - start_cpu]

    for sync in (True, False, True):
        step(sync)
    # A step with the allreduces and one without, in turn, so that both see the same load; each
    # step's time is the slowest rank's, its CPU time the busiest rank's.
    times = torch.tensor([step(True) + step(False) for _ in range(args.steps)], dtype=torch.float64)
    dist.all_reduce(times, op=dist.ReduceOp.MAX)
    # The same gradients' allreduces alone, in DDP's 25 MiB buckets, with nothing to hide them.
    grads = torch.zeros(params)
    buckets = grads.split((25 << 20) // 4)
    alone = []
    for _ in range(args.steps):
        dist.barrier()
        start = time.perf_counter()
        for work in [dist.all_reduce(b, async_op=True) for b in buckets]:
            work.wait()
        alone.append(time.perf_counter() - start)
    alone = torch.tensor(alone, dtype=torch.float64)
    dist.all_reduce(alone, op=dist.ReduceOp.MAX)
    column = [statistics.median(times[:, k].tolist()) for k in range(4)]
    return {"params": params, "step_s": column[0], "step_cpu_s": column[1], "no_sync_s": column[2],
            "no_sync_cpu_s": column[3], "allreduce_s": statistics.median(alone.tolist())}


# ---- the launcher --------------------------------------------------------------------------

def run_job(args, backend, nranks):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, os.path.abspath(__file__), args.what, "--rank-job", "--backend", backend,
           "--sizes", ",".join(str(s) for s in args.sizes), "--steps", str(args.steps), "--batch", str(args.batch)]
    if args.bucket_view:
        cmd.append("--bucket-view")
    procs = []
    for r in range(nranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(nranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    result = None
    for p in procs:
        try:
            out, err = p.communicate(timeout=args.job_timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise SystemExit("%s on %d ranks did not finish within %d s" % (backend, nranks, args.job_timeout))
        if p.returncode != 0:
            raise SystemExit("%s on %d ranks failed:\n%s" % (backend, nranks, err[-3000:]))
        for line in out.splitlines():
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
    return result


def best(old, new):
    """The better of two rounds: per size the faster call (allreduce), or the round whose
    median DDP step is the shorter (ddp)."""
    if old is None:
        return new
    if isinstance(new, list):
        return [a if a["us"] <= b["us"] else b for a, b in zip(old, new)]
    return old if old["step_s"] <= new["step_s"] else new


def print_allreduce(results, nps, sizes):
    print("\nall_reduce float32 (SUM), time per call = the slowest rank's mean; busbw = bytes/time x 2(n-1)/n")
    print("| ranks | size | weft us | gloo us | weft busbw GB/s | gloo busbw GB/s | weft / gloo |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in nps:
        w, g = results[("weft", n)], results[("gloo", n)]
        for i, size in enumerate(sizes):
            factor = 2.0 * (n - 1) / n if n > 1 else 1.0
            bw = [size / (r[i]["us"] * 1e-6) * factor / 1e9 for r in (w, g)]
            ratio = g[i]["us"] / w[i]["us"]
            print("| %d | %s | %.1f | %.1f | %.3f | %.3f | %.2fx |" % (n, human(size), w[i]["us"], g[i]["us"], bw[0],
                                                                      bw[1], ratio))


def print_ddp(results, nps, batch, bucket_view):
    print("\nDDP step of a %.1fM-parameter MLP (6 x Linear(2048, 2048)), batch %d per rank, SGD%s; median of "
          "the slowest rank's steps; communication = step - step under no_sync()" % (
              results[("weft", nps[0])]["params"] / 1e6, batch, ", gradient_as_bucket_view" if bucket_view else ""))
    print("| ranks | backend | step ms | no_sync step ms | step - no_sync ms | share | gradient allreduce alone ms "
          "| its share of the step | CPU ms per step / no_sync step |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in nps:
        for b in BACKENDS:
            r = results[(b, n)]
            comm = max(0.0, r["step_s"] - r["no_sync_s"])
            print("| %d | %s | %.1f | %.1f | %.1f | %.0f%% | %.1f | %.0f%% | %.0f / %.0f |" % (
                n, b, r["step_s"] * 1e3, r["no_sync_s"] * 1e3, comm * 1e3, 100 * comm / r["step_s"],
                r["allreduce_s"] * 1e3, 100 * r["allreduce_s"] / r["step_s"], r["step_cpu_s"] * 1e3,
                r["no_sync_cpu_s"] * 1e3))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["allreduce", "ddp"])
    p.add_argument("--np", default="2,4", help="comma list of process counts")
    p.add_argument("--sizes", default="8," + ",".join("%dK" % (1 << k) for k in range(0, 10)) + ","
                   + ",".join("%dM" % (1 << k) for k in range(0, 9)), help="all_reduce sizes in bytes (K, M)")
    p.add_argument("--steps", type=int, default=10, help="timed DDP steps (each with and without allreduces)")
    p.add_argument("--batch", type=int, default=16, help="DDP batch per rank")
    p.add_argument("--bucket-view", action="store_true",
                   help="DDP(gradient_as_bucket_view=True): gradients live in the buckets, no copies")
    p.add_argument("--rounds", type=int, default=1,
                   help="jobs per backend, alternating weft/gloo order; the best of them is kept")
    p.add_argument("--job-timeout", type=int, default=1200)
    p.add_argument("--rank-job", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backend", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    if args.rank_job:
        rank_main(args)
        return
    import torch
    nps = [int(x) for x in args.np.split(",")]
    print("torch %s, %d CPUs, load average %s" % (torch.__version__, os.cpu_count(),
                                                 " ".join("%.2f" % x for x in os.getloadavg())))
    results = {}
    for n in nps:
        for round_ in range(args.rounds):
            for b in BACKENDS if round_ % 2 == 0 else BACKENDS[::-1]:
                start = time.monotonic()
                results[(b, n)] = best(results.get((b, n)), run_job(args, b, n))
                print("  %s on %d ranks: %.0f s" % (b, n, time.monotonic() - start), flush=True)
    if args.what == "allreduce":
        print_allreduce(results, nps, args.sizes)
    else:
        print_ddp(results, nps, args.batch, args.bucket_view)
    print("load average after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
