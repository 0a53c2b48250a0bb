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
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
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
    # A communication hook chains on the allreduce's future (float16 on the wire).
    weft_hooked = DDP(copy.deepcopy(model), bucket_cap_mb=0.01)
    weft_hooked.register_comm_hook(None, default_hooks.fp16_compress_hook)
    gloo_hooked = DDP(copy.deepcopy(model), process_group=gloo, bucket_cap_mb=0.01)
    gloo_hooked.register_comm_hook(gloo, default_hooks.fp16_compress_hook)
    pairs = [(weft_model, gloo_model, 1e-5), (weft_hooked, gloo_hooked, 1e-3)]
    models = [m for pair in pairs for m in pair[:2]]
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in models]

    def flat(m):
        return torch.cat([p.detach().flatten() for p in m.parameters()])

    data = torch.Generator().manual_seed(99 + rank)  # each rank its own batch
    for step in range(args.steps):
        x = torch.randn(16, 32, generator=data)
        y = torch.randn(16, 8, generator=data)
        for m, opt in zip(models, optimizers):
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opt.step()
        for weft_m, gloo_m, tolerance in pairs:
            what = "with the fp16 hook" if weft_m is weft_hooked else "plain"
            mine = flat(weft_m)
            everyone = [torch.zeros_like(mine) for _ in range(n)]
            dist.all_gather(everyone, mine, group=gloo)
            for r in range(n):
                if not torch.equal(everyone[r], everyone[0]):
                    raise SystemExit("step %d, %s: rank %d's parameters differ from rank 0's (max %g)" % (
                        step, what, r, (everyone[r] - everyone[0]).abs().max()))
            theirs = flat(gloo_m)
            if not torch.allclose(mine, theirs, rtol=tolerance, atol=tolerance / 10):
                raise SystemExit("step %d, %s: weft's parameters differ from Gloo's by up to %g" % (
                    step, what, (mine - theirs).abs().max()))
    print("rank %d: %d DDP steps, parameters equal across ranks and close to Gloo's (max diff %g; %g with the "
          "fp16 hook)" % (rank, args.steps, (flat(weft_model) - flat(gloo_model)).abs().max(),
                          (flat(weft_hooked) - flat(gloo_hooked)).abs().max()))
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(worker, extra_args=lambda p: p.add_argument("--steps", type=int, default=5))
