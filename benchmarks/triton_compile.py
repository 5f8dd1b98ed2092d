"""Compile the project's Triton kernels for a GPU architecture, without a GPU, and print what each
thread uses: registers, spill stack, and whether the products became tensor-core instructions.

Usage (from the repository root, with the ``gpu`` extra; no GPU needed)::

    python benchmarks/triton_compile.py                  # sm_90 (H100, H200)
    python benchmarks/triton_compile.py --arch 80 --json out.json

Triton compiles to PTX and ptxas (shipped in the Triton wheel) to a cubin for ``--arch``; the
cubin's resource usage comes from ``cuobjdump``, also in the wheel. A kernel that does not
compile, or spills (a non-zero STACK) at the tiles training uses, shows here before a GPU is
lent. Exit status 1 when any kernel failed to compile or spilled at the default tiles.
``TRITON_INTERPRET`` must be unset (the interpreter's functions do not compile).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def _usage(kernel, cuobjdump: str) -> dict[str, int]:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as handle:
        handle.write(kernel.asm["cubin"])
        handle.flush()
        text = subprocess.run([cuobjdump, "--dump-resource-usage", handle.name],
                              capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", text))
    mma = sum(1 for line in kernel.asm["ptx"].splitlines() if "mma" in line)
    return {"registers": int(fields.get("REG", -1)), "stack": int(fields.get("STACK", -1)),
            "local": int(fields.get("LOCAL", -1)), "mma": mma}


def cases() -> list[tuple[str, object, dict[str, str], dict[tuple[int, ...], object], int,
                          bool]]:
    """(label, kernel, signature, constexprs, num_warps, default tiles?) of every kernel the
    trainers launch, in both dtypes."""
    from boundcalc.validators.kernel import gpu_kernel, gpu_recurrence, triton_source

    out = []
    for dt in ("fp64", "fp32"):
        sums = {name: f"*{dt}" for name in ("x_ptr", "wq_ptr", "u_ptr", "a_ptr", "mu_ptr")}
        sums.update({name: "i32" for name in ("T", "m", "d", "group")})
        sums.update({name: "constexpr" for name in ("BLOCK_H", "BLOCK_T", "BLOCK_D", "WITH_MU")})
        tiles = [(gpu_kernel.BLOCK_HEADS, gpu_kernel.BLOCK_TOKENS, gpu_kernel.NUM_WARPS),
                 (gpu_kernel.BLOCK_HEADS, gpu_kernel.MIN_BLOCK, gpu_kernel.NUM_WARPS),
                 (gpu_kernel.BLOCK_HEADS_WIDE, gpu_kernel.BLOCK_TOKENS, gpu_kernel.NUM_WARPS),
                 (gpu_kernel.BLOCK_HEADS_WIDE, gpu_kernel.MIN_BLOCK, gpu_kernel.NUM_WARPS),
                 (64, 32, 4), (32, 64, 4)]
        for heads, tokens, warps in dict.fromkeys(tiles):
            for block_d in (16, 32):              # d ≤ 16 (figure 1, the T sweep); 17 (figure 2)
                # the tiles training takes: its heads for this d, and the tokens of a long
                # sequence or of one of 16 tokens or fewer
                default = (warps == gpu_kernel.NUM_WARPS
                           and heads == (gpu_kernel.BLOCK_HEADS if block_d == 16
                                         else gpu_kernel.BLOCK_HEADS_WIDE)
                           and tokens in (gpu_kernel.BLOCK_TOKENS, gpu_kernel.MIN_BLOCK))
                for with_mu in (True, False):
                    out.append((f"softmax_token_sums {dt} {heads}x{tokens}x{block_d} w{warps}"
                                f"{'' if with_mu else ' (a only)'}",
                                triton_source.softmax_token_sums_kernel, sums,
                                {(9,): heads, (10,): tokens, (11,): block_d, (12,): with_mu},
                                warps, default))
        fwd = {name: f"*{dt}" for name in ("drive_ptr", "u_ptr", "states_ptr", "dz_ptr",
                                           "last_ptr", "b_ptr")}
        fwd.update({name: "i32" for name in ("T", "N", "samples_units", "m")})
        fwd.update({name: "constexpr" for name in ("STORE", "TANGENT", "LIBDEVICE", "BLOCK")})
        for store, tangent in ((True, True), (True, False), (False, False)):
            out.append((f"indrnn_forward {dt} store={store} tangent={tangent}",
                        triton_source.indrnn_forward_kernel, fwd,
                        {(10,): store, (11,): tangent, (12,): triton_source.HAS_LIBDEVICE,
                         (13,): gpu_recurrence.BLOCK}, 4, True))
        bwd = {name: f"*{dt}" for name in ("dz_ptr", "states_ptr", "delta_ptr", "u_ptr",
                                           "grad_u_ptr")}
        bwd.update({name: "i32" for name in ("T", "N", "samples_units", "m")})
        bwd["BLOCK"] = "constexpr"
        out.append((f"indrnn_backward {dt}", triton_source.indrnn_backward_kernel, bwd,
                    {(9,): gpu_recurrence.BLOCK}, 4, True))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, default=90, help="compute capability ×10 (90)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--defaults-only", action="store_true",
                        help="only the tiles training uses (the CI test)")
    args = parser.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        print("unset TRITON_INTERPRET: the interpreter's functions do not compile",
              file=sys.stderr)
        return 2
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin",
                             "cuobjdump")
    target = GPUTarget("cuda", args.arch, 32)
    rows, bad = [], 0
    for label, kernel, signature, constexprs, warps, default in cases():
        if args.defaults_only and not default:
            continue
        row = {"kernel": label, "arch": args.arch, "default_tiles": default}
        try:
            compiled = triton.compile(ASTSource(fn=kernel, signature=signature,
                                                constexprs=constexprs),
                                      target=target, options={"num_warps": warps})
            row.update(_usage(compiled, cuobjdump))
        except Exception as exc:   # report every kernel, then fail
            row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        failed = "error" in row or (default and row.get("stack", 0) > 0)
        bad += failed
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
