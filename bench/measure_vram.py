"""Measure fine-tuning peak memory on a real GPU and write calibration cases.

Runs a few training steps of randomly initialised decoder models (built from a config: no download)
for full fine-tuning, LoRA (peft) and QLoRA (bitsandbytes NF4) at several sizes and sequence
lengths, records torch.cuda.max_memory_reserved and max_memory_allocated, and writes the cases in
the calibration schema (knowledge/calibration/vram_cases.yaml) to
knowledge/calibration/measured_<gpu>.yaml, where tests/test_calibration.py picks them up.

Each configuration runs in a fresh subprocess, so the allocator starts empty every time.

The 2025-2026 shapes (Qwen3 with QK-norm, Gemma 3 with its 262k vocabulary and sliding-window layers, Phi-4-mini,
and the Mixture-of-Experts models Qwen3-30B-A3B, gpt-oss-20b and Mixtral 8x7B) are built from their config.json
values (HF_MODELS). A MoE model too big for one card is built with FEWER LAYERS (e.g. 12 of Qwen3-30B-A3B's 48):
the case then records exactly the shape that ran (its config, with the reduced layer count, goes into the case as
``model_config`` and is replayed through bot/advisor/hf_config.py), so the comparison stays honest; it is not
rescaled to the full model. gpt-oss runs with bf16 experts (random weights cannot be MXFP4 checkpoints). LoRA on
MoE uses PEFT's "all-linear", which on Transformers v5 fused experts leaves the experts unadapted, and QLoRA loads
with a plain BitsAndBytesConfig, which leaves fused experts in bf16: exactly the stack the estimator assumes.

Needs (GPU machine only): torch with CUDA, transformers, peft, bitsandbytes.

    python bench/measure_vram.py                       # default grid
    python bench/measure_vram.py --quick               # two small models, short sequences
    python bench/measure_vram.py --models llama-3.2-1b --methods qlora --seq-lens 1024,4096
    python bench/measure_vram.py --list                # print the grid and exit (no GPU needed)
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "knowledge" / "calibration"
GIB = 2 ** 30

# Published shapes (config.json of each model); weights are random, only shapes matter for memory.
MODELS = {
    "tinyllama-1.1b": dict(hidden=2048, layers=22, heads=32, kv_heads=4, intermediate=5632, vocab=32000,
                           tied_embeddings=False),
    "llama-3.2-1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192, vocab=128256,
                         tied_embeddings=True),
    "llama-3.2-3b": dict(hidden=3072, layers=28, heads=24, kv_heads=8, intermediate=8192, vocab=128256,
                         tied_embeddings=True),
    "llama-3.1-8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, vocab=128256,
                         tied_embeddings=False),
}
# config.json values of the 2025-2026 shapes (sources in knowledge/models.yml). "layers_of" = the full model's layer
# count when the entry runs fewer layers than the published model.
HF_MODELS = {
    "qwen3-8b": dict(model_type="qwen3", hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                     num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                     tie_word_embeddings=False),
    "qwen3-1.7b": dict(model_type="qwen3", hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                       tie_word_embeddings=True),
    "gemma-3-1b": dict(model_type="gemma3_text", hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
                       num_attention_heads=4, num_key_value_heads=1, head_dim=256, vocab_size=262144,
                       sliding_window=512, sliding_window_pattern=6, tie_word_embeddings=True),
    "gemma-3-4b-text": dict(model_type="gemma3_text", hidden_size=2560, intermediate_size=10240,
                            num_hidden_layers=34, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                            vocab_size=262208, sliding_window=1024, sliding_window_pattern=6,
                            tie_word_embeddings=True),
    "phi-4-mini": dict(model_type="phi3", hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                       num_attention_heads=24, num_key_value_heads=8, vocab_size=200064, tie_word_embeddings=True),
    "qwen3-30b-a3b-l12": dict(model_type="qwen3_moe", hidden_size=2048, intermediate_size=6144,
                              moe_intermediate_size=768, num_hidden_layers=12, layers_of=48, num_attention_heads=32,
                              num_key_value_heads=4, head_dim=128, num_experts=128, num_experts_per_tok=8,
                              decoder_sparse_step=1, norm_topk_prob=True, vocab_size=151936,
                              tie_word_embeddings=False),
    "gpt-oss-20b-l8": dict(model_type="gpt_oss", hidden_size=2880, intermediate_size=2880, num_hidden_layers=8,
                           layers_of=24, num_attention_heads=64, num_key_value_heads=8, head_dim=64,
                           num_local_experts=32, num_experts_per_tok=4, vocab_size=201088, tie_word_embeddings=False,
                           attention_bias=True, sliding_window=128,
                           layer_types=["sliding_attention", "full_attention"] * 4),
    "mixtral-8x7b-l8": dict(model_type="mixtral", hidden_size=4096, intermediate_size=14336, num_hidden_layers=8,
                            layers_of=32, num_attention_heads=32, num_key_value_heads=8, num_local_experts=8,
                            num_experts_per_tok=2, vocab_size=32000, tie_word_embeddings=False),
}
# Full fine-tuning in mixed precision needs ~16 B/param: skip it where it cannot fit a 80 GB card.
FULL_MAX_PARAMS = 4e9
LORA_TARGETS = {
    "all_linear": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "attention": ["q_proj", "k_proj", "v_proj", "o_proj"],
    "attention_qv": ["q_proj", "v_proj"],
}


def grid(args) -> list:
    configs = []
    for model in args.models:
        for method in args.methods:
            for seq_len in args.seq_lens:
                for gc in args.checkpointing:
                    configs.append(dict(model=model, method=method, seq_len=seq_len, micro_batch=args.micro_batch,
                                        gradient_checkpointing=gc, rank=args.rank, targets=args.targets,
                                        steps=args.steps))
    return configs


# ------------------------------------------------------------------------------------------ one run
def run_one(cfg: dict) -> dict:
    """Build, train a few steps, report peaks. Runs inside the child process."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig

    if cfg["model"] in HF_MODELS:
        values = {k: v for k, v in HF_MODELS[cfg["model"]].items() if k not in ("model_type", "layers_of")}
        config = AutoConfig.for_model(HF_MODELS[cfg["model"]]["model_type"], **values,
                                      max_position_embeddings=max(cfg["seq_len"], 4096), use_cache=False)
        config._attn_implementation = "sdpa" if HF_MODELS[cfg["model"]]["model_type"] != "gpt_oss" else "eager"
        vocab = values["vocab_size"]
    else:
        shape = MODELS[cfg["model"]]
        config = LlamaConfig(hidden_size=shape["hidden"], num_hidden_layers=shape["layers"],
                             num_attention_heads=shape["heads"], num_key_value_heads=shape["kv_heads"],
                             intermediate_size=shape["intermediate"], vocab_size=shape["vocab"],
                             tie_word_embeddings=shape["tied_embeddings"],
                             max_position_embeddings=max(cfg["seq_len"], 2048),
                             attn_implementation="sdpa", use_cache=False)
        vocab = shape["vocab"]
    moe = bool(getattr(config, "num_experts", None) or getattr(config, "num_local_experts", None))
    method = cfg["method"]
    torch.manual_seed(0)
    with torch.device("meta"):
        params = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
    if method == "full" and params > FULL_MAX_PARAMS:
        return {"skipped": f"full fine-tuning of {params / 1e9:.1f}B params needs more than one card"}

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    if method == "qlora":
        # Save a random bf16 checkpoint locally, then load it the way users do (BitsAndBytesConfig).
        from transformers import BitsAndBytesConfig
        with tempfile.TemporaryDirectory() as tmp:
            AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16).save_pretrained(tmp)
            quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                       bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_use_double_quant=False)
            model = AutoModelForCausalLM.from_pretrained(tmp, quantization_config=quant, torch_dtype=torch.bfloat16,
                                                         attn_implementation="sdpa", device_map={"": 0})
    else:
        dtype = torch.float32 if method == "full" else torch.bfloat16   # full = AMP with fp32 master
        model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype).cuda()
    model.config.use_cache = False
    if cfg["gradient_checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model
        if cfg["gradient_checkpointing"]:
            model.enable_input_require_grads()
        # MoE: PEFT's "all-linear" (what users write); on Transformers v5 the fused expert tensors are not
        # nn.Linear, so the experts stay unadapted (the estimator's default moe_targets "attention_dense_shared")
        targets = "all-linear" if moe and cfg["targets"] == "all_linear" else LORA_TARGETS[cfg["targets"]]
        model = get_peft_model(model, LoraConfig(r=cfg["rank"], lora_alpha=2 * cfg["rank"], lora_dropout=0.0,
                                                 target_modules=targets, task_type="CAUSAL_LM"))
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, fused=True)
    tokens = torch.randint(0, vocab, (cfg["micro_batch"], cfg["seq_len"]), device="cuda")
    try:
        for _ in range(cfg["steps"]):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=method == "full"):
                loss = model(input_ids=tokens, labels=tokens).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    except torch.cuda.OutOfMemoryError as exc:
        return {"oom": str(exc).splitlines()[0]}
    quantized_experts = None
    if method == "qlora" and moe:
        import bitsandbytes as bnb
        quantized_experts = any(isinstance(m, bnb.nn.Linear4bit) and "expert" in n for n, m in model.named_modules())
    return {"params": params, "trainable": sum(p.numel() for p in trainable), "moe": moe,
            "quantized_experts": quantized_experts,
            "reserved_gib": torch.cuda.max_memory_reserved() / GIB,
            "allocated_gib": torch.cuda.max_memory_allocated() / GIB,
            "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "versions": _versions()}


def _versions() -> str:
    out = []
    for name in ("transformers", "peft", "bitsandbytes"):
        try:
            out.append(f"{name} {__import__(name).__version__}")
        except Exception:  # not installed: the run did not need it
            pass
    return ", ".join(out)


# ------------------------------------------------------------------------------------------ cases
def to_cases(cfg: dict, result: dict, when: str) -> list:
    model_config = None
    if cfg["model"] in HF_MODELS:
        # the exact shape that ran; the replay reads it with bot/advisor/hf_config.py (no import needed here)
        entry = HF_MODELS[cfg["model"]]
        model_config = {k: v for k, v in entry.items() if k != "layers_of"}
        model_config["_name_or_path"] = cfg["model"]
        model = None
    else:
        shape = MODELS[cfg["model"]]
        model = {"name": cfg["model"], "params": result["params"], "layers": shape["layers"], "hidden": shape["hidden"],
                 "heads": shape["heads"], "kv_heads": shape["kv_heads"], "intermediate": shape["intermediate"],
                 "vocab": shape["vocab"], "tied_embeddings": shape["tied_embeddings"], "mlp": "swiglu"}
    plan = {
        "model": model,
        "method": cfg["method"],
        "precision": "mixed" if cfg["method"] == "full" else "bf16",
        "optimizer": "adamw",
        "seq_len": cfg["seq_len"],
        "micro_batch": cfg["micro_batch"],
        "gradient_checkpointing": cfg["gradient_checkpointing"],
        # gpt-oss trains with eager attention (its sinks have no FlashAttention backward); the rest use SDPA
        "attention": "eager" if (model_config or {}).get("model_type") == "gpt_oss" else "flash",
        "gpus": 1, "sharding": "none", "offload": "none",
    }
    if cfg["method"] != "full":
        plan["lora"] = {"rank": cfg["rank"], "targets": cfg["targets"]}
    if result.get("moe") and cfg["method"] == "qlora":
        plan["qlora_moe_experts"] = "nf4" if result.get("quantized_experts") else "bf16"
    base_id = (f"bench-{cfg['model']}-{cfg['method']}-s{cfg['seq_len']}-b{cfg['micro_batch']}"
               f"-{'gc' if cfg['gradient_checkpointing'] else 'nogc'}")
    note = (f"bench/measure_vram.py on {result['gpu']} ({when}); torch {result['torch']}, {result['versions']}. "
            f"Random weights, {cfg['steps']} steps on fixed random tokens (every sequence full length), "
            f"SDPA attention, torch AdamW fused, zero_grad(set_to_none=True), no gradient accumulation. "
            + ("Full: fp32 model + bf16 autocast. " if cfg["method"] == "full" else
               f"PEFT LoRA r{cfg['rank']} {cfg['targets']}, dropout 0, adapters fp32 (PEFT default). ")
            + ("QLoRA: bitsandbytes NF4 without double quantisation, embeddings/LM head bf16, no "
               "prepare_model_for_kbit_training. " if cfg["method"] == "qlora" else "")
            + f"{result['trainable']} trainable params, {result['params']} params in total.")
    if model_config is not None:
        layers_of = HF_MODELS[cfg["model"]].get("layers_of")
        if layers_of:
            note += (f" Built with {model_config['num_hidden_layers']} of the published model's {layers_of} layers "
                     "(too big for one card otherwise); the case is this reduced model, not the full one.")
        if result.get("moe"):
            note += (" MoE: LoRA target_modules 'all-linear'; QLoRA experts quantized: "
                     f"{result.get('quantized_experts')}.")
    source = "CloudRUX bench/measure_vram.py"
    extra = {"model_config": model_config} if model_config is not None else {}
    return [
        {"id": base_id, "source": source, **extra, "plan": plan,
         "measured": {"per_gpu_gib": round(result["reserved_gib"], 2), "kind": "reserved"},
         "fidelity": "high", "note": note + " Value = torch.cuda.max_memory_reserved / 2**30."},
        {"id": base_id + "--allocated", "source": source, **extra, "plan": plan,
         "measured": {"per_gpu_gib": round(result["allocated_gib"], 2), "kind": "allocated"},
         "fidelity": "high", "note": note + " Value = torch.cuda.max_memory_allocated / 2**30."},
    ]


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# ------------------------------------------------------------------------------------------ main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="tinyllama-1.1b,llama-3.2-1b,llama-3.2-3b,llama-3.1-8b")
    p.add_argument("--methods", default="full,lora,qlora")
    p.add_argument("--seq-lens", default="512,2048,4096")
    p.add_argument("--checkpointing", default="on,off", help="on, off or on,off")
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--targets", default="all_linear", choices=sorted(LORA_TARGETS))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--timeout", type=int, default=600, help="seconds per configuration")
    p.add_argument("--out", type=Path, default=None, help="default knowledge/calibration/measured_<gpu>.yaml")
    p.add_argument("--quick", action="store_true", help="tinyllama and llama-3.2-1b, 512 and 2048 tokens")
    p.add_argument("--new-shapes", action="store_true",
                   help="the 2025-2026 shapes: Qwen3, Gemma 3, Phi-4-mini and reduced-layer MoE models "
                        "(LoRA/QLoRA, 512/2048 tokens, checkpointing on)")
    p.add_argument("--list", action="store_true", help="print the grid and exit")
    p.add_argument("--one", help=argparse.SUPPRESS)   # internal: run one JSON config in this process
    args = p.parse_args(argv)
    if args.quick:
        args.models, args.seq_lens = "tinyllama-1.1b,llama-3.2-1b", "512,2048"
    if args.new_shapes:
        args.models, args.methods, args.seq_lens, args.checkpointing = (",".join(HF_MODELS), "lora,qlora",
                                                                         "512,2048", "on")
    args.models = [m for m in args.models.split(",") if m]
    unknown = [m for m in args.models if m not in MODELS and m not in HF_MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}; known: {', '.join([*MODELS, *HF_MODELS])}")
    args.methods = [m for m in args.methods.split(",") if m]
    args.seq_lens = [int(s) for s in args.seq_lens.split(",") if s]
    args.checkpointing = [c == "on" for c in args.checkpointing.split(",") if c]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(run_one(json.loads(args.one))), flush=True)
        return 0
    configs = grid(args)
    if args.list:
        for cfg in configs:
            print(json.dumps(cfg))
        return 0
    try:
        import torch  # imported here so --list and --help work without torch
    except ImportError:
        print("measure_vram: PyTorch is not installed; run this on a GPU machine with torch, transformers, "
              "peft and bitsandbytes.", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("measure_vram: no CUDA GPU is visible (torch.cuda.is_available() is False); nothing was measured.",
              file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0)
    out = args.out or OUT_DIR / f"measured_{slug(gpu)}.yaml"
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
    cases = []
    for cfg in configs:
        checkpointing = "on" if cfg["gradient_checkpointing"] else "off"
        label = f"{cfg['model']} {cfg['method']} seq {cfg['seq_len']} gc {checkpointing}"
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(cfg)], capture_output=True,
                                  text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{label}: timed out", flush=True)
            continue
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode or not lines:
            print(f"{label}: failed\n{proc.stderr[-2000:]}", flush=True)
            continue
        result = json.loads(lines[-1][len("RESULT "):])
        if "skipped" in result or "oom" in result:
            print(f"{label}: {result.get('skipped') or 'out of memory: ' + result['oom']}", flush=True)
            continue
        print(f"{label}: reserved {result['reserved_gib']:.2f} GiB, allocated {result['allocated_gib']:.2f} GiB",
              flush=True)
        cases += to_cases(cfg, result, when)
        _write(out, gpu, cases)   # after every run, so a timeout keeps what was measured
    if not cases:
        print("measure_vram: no configuration produced a measurement.", file=sys.stderr)
        return 1
    print(f"wrote {len(cases)} cases to {out}")
    return 0


def _write(out: Path, gpu: str, cases: list) -> None:
    import yaml
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (f"# Measured by bench/measure_vram.py on {gpu}. Schema: knowledge/calibration/vram_cases.yaml.\n"
              "# Replayed by tests/test_calibration.py together with the published cases.\n")
    out.write_text(header + yaml.safe_dump({"cases": cases}, sort_keys=False, allow_unicode=True, width=110),
                   encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
