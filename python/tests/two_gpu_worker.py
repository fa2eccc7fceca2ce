"""One rank of test_distributed.py's two-GPU test, run by torch.distributed.run: the vocabulary-
parallel cross-entropy (loss and the shard's gradient), softmax, top-k (k = 50) and sample (top_k
50, temperature 0.8, top_p 0.9, seed 1234, offset 5) of a 64 x 50257 batch split at column 25129,
saved to <dir>/rank<k>.pt. Usage: worker.py dir dtype."""
import os
import sys

import torch
import torch.distributed as dist

import warpkit.distributed as wd


def main():
    out, dtype = sys.argv[1], getattr(torch, sys.argv[2])
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    g = torch.Generator().manual_seed(9)
    rows, vocab = 64, 50257
    x = torch.randn(rows, vocab, generator=g).to(dtype).cuda()
    target = torch.randint(0, vocab, (rows,), generator=g).cuda()
    cut = vocab // 2 + 1
    a, b = (0, cut) if rank == 0 else (cut, vocab)
    shard = x[:, a:b].clone().requires_grad_()
    loss = wd.vocab_parallel_cross_entropy(shard, target, a, vocab)
    loss.backward()
    y = wd.vocab_parallel_softmax(x[:, a:b])
    tv, ti = wd.vocab_parallel_topk(x[:, a:b], 50, a)
    tokens = wd.vocab_parallel_sample(x[:, a:b], a, top_k=50, temperature=0.8, top_p=0.9, seed=1234, offset=5)
    torch.save({"loss": loss.detach().cpu(), "grad": shard.grad.float().cpu(), "y": y.float().cpu(),
                "topk_values": tv.cpu(), "topk_indices": ti.cpu(), "tokens": tokens.cpu()},
               os.path.join(out, f"rank{rank}.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
