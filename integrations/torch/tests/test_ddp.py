"""DistributedDataParallel on the "weft" backend: a small model trained for a few steps on N
processes, side by side with the same model on Gloo (a second process group over the same
ranks). After every step the weft model's parameters must be the same bits on every rank, and
close to the Gloo model's (the two backends may add the ranks' gradients in another order)."""

import harness


def worker(args):
    import copy
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    import weft_torch  # noqa: F401

    rank, n = args.rank, args.world_size
    dist.init_process_group("weft", init_method=args.init_method, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    gloo = dist.new_group(backend="gloo")

    # Each rank starts from different weights: DDP must broadcast rank 0's.
    torch.manual_seed(1234 + rank)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8))
    # A small bucket cap makes several buckets, so several allreduces per step and their futures.
    weft_model = DDP(model, bucket_cap_mb=0.01)
    gloo_model = DDP(copy.deepcopy(model), process_group=gloo, bucket_cap_mb=0.01)
    assert dist.get_backend(weft_model.process_group) == "weft"
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (weft_model, gloo_model)]

    def flat(m):
        return torch.cat([p.detach().flatten() for p in m.parameters()])

    data = torch.Generator().manual_seed(99 + rank)  # each rank its own batch
    for step in range(args.steps):
        x = torch.randn(16, 32, generator=data)
        y = torch.randn(16, 8, generator=data)
        for m, opt in zip((weft_model, gloo_model), optimizers):
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opt.step()
        mine = flat(weft_model)
        everyone = [torch.zeros_like(mine) for _ in range(n)]
        dist.all_gather(everyone, mine, group=gloo)
        for r in range(n):
            if not torch.equal(everyone[r], everyone[0]):
                raise SystemExit("step %d: rank %d's parameters differ from rank 0's (max %g)" % (
                    step, r, (everyone[r] - everyone[0]).abs().max()))
        theirs = flat(gloo_model)
        if not torch.allclose(mine, theirs, rtol=1e-5, atol=1e-6):
            raise SystemExit("step %d: weft's parameters differ from Gloo's by up to %g" % (
                step, (mine - theirs).abs().max()))
    print("rank %d: %d DDP steps, parameters equal across ranks and close to Gloo's (max diff %g)" % (
        rank, args.steps, (flat(weft_model) - flat(gloo_model)).abs().max()))
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(worker, extra_args=lambda p: p.add_argument("--steps", type=int, default=5))
