"""Exports programs from real model code (Hugging Face transformers, timm,
torchvision) the way users export them, in the layout `aten conform models
DIR` reads (`NAME.pt2`, `NAME.inputs.safetensors`,
`NAME.expected.safetensors`, `NAME.sizeK.*` for dynamic programs, and a
`models.json` with per-model tolerances).

Each model is built from a small config with random weights (fixed seed)
and exported in the forms asked for:

- `core`: `torch.export.export(model, args).run_decompositions()`;
- `ir`: `torch.export.export(model, args)`, saved as it is (the default
  export IR: composite and in-place operators);
- `dyn`: exported with `torch.export.Dim`s on the batch (and sequence)
  axes, then decomposed; checked at three sizes;
- `bf16`: the model in bfloat16, core form.

Expected outputs are PyTorch's eager outputs. A model whose export fails
is reported and skipped.

Run with a Python that has torch==2.15.0, torchvision, transformers and
timm:

    python conformance/scripts/export_models.py OUT_DIR [--forms core,ir,dyn]
        [--only NAME,...] [--list]
    aten conform models OUT_DIR
"""

import argparse
import copy
import json
import os
import sys
import time
import traceback

import torch
from safetensors.torch import save_file

torch.set_num_threads(1)

# --- model builders ---------------------------------------------------------
#
# A builder returns (module, make_inputs, kind): `make_inputs(batch, seq)`
# gives the example inputs; `kind` is "text" (batch and sequence dynamic) or
# "vision" (batch dynamic).


class Outputs(torch.nn.Module):
    """Calls `model` and keeps the tensors named by `keys` (a tuple)."""

    def __init__(self, model, keys, **fixed):
        super().__init__()
        self.model = model
        self.keys = keys
        self.fixed = fixed

    def forward(self, *args):
        out = self.model(*args, **self.fixed)
        if isinstance(out, torch.Tensor):
            return (out,)
        if isinstance(out, (tuple, list)):
            return tuple(o for o in out if isinstance(o, torch.Tensor))
        if isinstance(out, dict):
            return tuple(out[k] for k in self.keys)
        return tuple(getattr(out, k) for k in self.keys)


class Seq2Seq(torch.nn.Module):
    """An encoder-decoder model called with decoder inputs."""

    def __init__(self, model, encoder_arg):
        super().__init__()
        self.model = model
        self.encoder_arg = encoder_arg

    def forward(self, enc, dec):
        kwargs = {self.encoder_arg: enc, "decoder_input_ids": dec, "use_cache": False}
        return (self.model(**kwargs).logits,)


def tokens(vocab):
    def make(batch, seq):
        return (torch.randint(0, vocab, (batch, seq)),)

    return make


def tokens_and_mask(vocab):
    def make(batch, seq):
        ids = torch.randint(0, vocab, (batch, seq))
        mask = torch.ones(batch, seq, dtype=torch.long)
        if seq > 2:
            mask[0, -2:] = 0
        return ids, mask

    return make


def images(channels=3, size=64):
    def make(batch, _seq):
        return (torch.randn(batch, channels, size, size),)

    return make


SMALL = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    vocab_size=256,
    max_position_embeddings=128,
)


def from_config(cls, config):
    """The model with PyTorch's attention where the architecture supports
    it (`sdpa`), its own (`eager`) where it does not."""
    try:
        return cls.from_config(config, attn_implementation="sdpa")
    except ValueError:
        return cls.from_config(config, attn_implementation="eager")


def hf_auto(model_type, head="AutoModelForCausalLM", keys=("logits",), mask=False, **cfg):
    def build():
        import transformers

        params = dict(SMALL)
        params.update(cfg)
        config = transformers.AutoConfig.for_model(model_type, **params)
        model = from_config(getattr(transformers, head), config)
        vocab = getattr(config, "vocab_size", 256)
        inputs = tokens_and_mask(vocab) if mask else tokens(vocab)
        return Outputs(model, keys, use_cache=False) if "CausalLM" in head else Outputs(model, keys), inputs, "text"

    return build


def hf_seq2seq(model_type, encoder_arg="input_ids", features=None, **cfg):
    def build():
        import transformers

        config = transformers.AutoConfig.for_model(model_type, **cfg)
        model = from_config(transformers.AutoModelForSeq2SeqLM if features is None else
                            transformers.AutoModelForSpeechSeq2Seq, config)
        vocab = config.vocab_size

        def make(batch, seq):
            if features is None:
                enc = torch.randint(0, vocab, (batch, seq))
            else:
                enc = torch.randn(batch, features[0], features[1])
            return enc, torch.randint(0, vocab, (batch, max(2, seq // 2)))

        return Seq2Seq(model, encoder_arg), make, "seq2seq" if features is None else "speech"

    return build


def hf_vision(model_type, head="AutoModelForImageClassification", keys=("logits",), size=32, **cfg):
    def build():
        import transformers

        params = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                      image_size=size, num_labels=10)
        params.update(cfg)
        params = {k: v for k, v in params.items() if v is not None}
        config = transformers.AutoConfig.for_model(model_type, **params)
        model = from_config(getattr(transformers, head), config)
        return Outputs(model, keys), images(size=size), "vision"

    return build


def tv(name, size=64, **kw):
    def build():
        import torchvision

        builder = torchvision.models
        for part in name.split("."):
            builder = getattr(builder, part)
        model = builder(weights=None, **kw)
        if "segmentation" in name:
            model = Outputs(model, ("out",))
        return model, images(size=size), "vision"

    return build


def timm_model(name, size=64, **kw):
    size = kw.get("img_size", size)

    def build():
        import timm

        model = timm.create_model(name, pretrained=False, num_classes=10, **kw)
        return model, images(size=size), "vision"

    return build


MODELS = {
    # transformers: decoders
    "gpt2": hf_auto("gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=128, vocab_size=256),
    "llama": hf_auto("llama", num_key_value_heads=2),
    "mistral": hf_auto("mistral", num_key_value_heads=2, sliding_window=None),
    "qwen2": hf_auto("qwen2", num_key_value_heads=2),
    "qwen3": hf_auto("qwen3", num_key_value_heads=2, head_dim=16),
    "gemma": hf_auto("gemma", num_key_value_heads=2, head_dim=16),
    "gemma2": hf_auto("gemma2", num_key_value_heads=2, head_dim=16),
    "phi": hf_auto("phi"),
    "phi3": hf_auto("phi3", num_key_value_heads=2, pad_token_id=0),
    "falcon": hf_auto("falcon", num_kv_heads=2, new_decoder_architecture=False),
    "bloom": hf_auto("bloom", n_layer=2, n_head=4),
    "opt": hf_auto("opt", ffn_dim=128, word_embed_proj_dim=64),
    "gptj": hf_auto("gptj", n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=128),
    "gpt_neo": hf_auto("gpt_neo", num_layers=2, attention_types=[[["global", "local"], 1]], window_size=8),
    "gpt_bigcode": hf_auto("gpt_bigcode", n_embd=64, n_layer=2, n_head=4, n_positions=128),
    "codegen": hf_auto("codegen", n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=128, n_ctx=128),
    "stablelm": hf_auto("stablelm", num_key_value_heads=2),
    "olmo": hf_auto("olmo", num_key_value_heads=2),
    "mixtral": hf_auto("mixtral", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": hf_auto("qwen2_moe", num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                          moe_intermediate_size=32, shared_expert_intermediate_size=64),
    "starcoder2": hf_auto("starcoder2", num_key_value_heads=2),
    "granite": hf_auto("granite", num_key_value_heads=2),
    "cohere": hf_auto("cohere", num_key_value_heads=2),
    # transformers: encoders
    "bert": hf_auto("bert", head="AutoModelForSequenceClassification", mask=True, num_labels=4),
    "roberta": hf_auto("roberta", head="AutoModelForSequenceClassification", mask=True, pad_token_id=1),
    "distilbert": hf_auto("distilbert", head="AutoModelForSequenceClassification", mask=True,
                          dim=64, n_layers=2, n_heads=4, hidden_dim=128),
    "albert": hf_auto("albert", head="AutoModelForMaskedLM", mask=True, embedding_size=32),
    "electra": hf_auto("electra", head="AutoModelForTokenClassification", mask=True, embedding_size=32),
    "deberta_v2": hf_auto("deberta-v2", head="AutoModelForSequenceClassification", mask=True),
    "mpnet": hf_auto("mpnet", head="AutoModel", keys=("last_hidden_state",), mask=True),
    "xlm_roberta": hf_auto("xlm-roberta", head="AutoModelForMaskedLM", mask=True),
    "modernbert": hf_auto("modernbert", head="AutoModelForMaskedLM", mask=True, global_attn_every_n_layers=2,
                          local_attention=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                          cls_token_id=1, sep_token_id=2),
    # transformers: encoder-decoders
    "t5": hf_seq2seq("t5", vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4),
    "bart": hf_seq2seq("bart", vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                       decoder_ffn_dim=128, max_position_embeddings=128),
    "whisper": hf_seq2seq("whisper", encoder_arg="input_features", features=(16, 64), vocab_size=256,
                          d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                          decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                          num_mel_bins=16, max_source_positions=32, max_target_positions=64,
                          pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
    # transformers: vision
    "vit": hf_vision("vit", patch_size=8),
    "deit": hf_vision("deit", head="AutoModel", keys=("last_hidden_state",), patch_size=8),
    "beit": hf_vision("beit", patch_size=8),
    "dinov2": hf_vision("dinov2", patch_size=8),
    "swin": hf_vision("swin", embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4, patch_size=2,
                      hidden_size=None, num_attention_heads=None),
    "convnext_hf": hf_vision("convnext", hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
    "resnet_hf": hf_vision("resnet", hidden_sizes=[16, 32], depths=[1, 1], embedding_size=16),
    "segformer": hf_vision("segformer", head="AutoModelForSemanticSegmentation", hidden_sizes=[16, 32],
                           depths=[1, 1], num_encoder_blocks=2, sr_ratios=[2, 1], num_attention_heads=[1, 2],
                           decoder_hidden_size=32, size=64, hidden_size=None),
    "mobilevit": hf_vision("mobilevit", hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 16, 24, 24, 32, 48, 160],
                           size=64, hidden_size=None),
    # torchvision
    "resnet18": tv("resnet18"),
    "mobilenet_v2": tv("mobilenet_v2", width_mult=0.5),
    "mobilenet_v3_large": tv("mobilenet_v3_large"),
    "efficientnet_v2_s": tv("efficientnet_v2_s"),
    "densenet121": tv("densenet121"),
    "regnet_y_400mf": tv("regnet_y_400mf"),
    "googlenet": tv("googlenet", aux_logits=False, init_weights=True),
    "inception_v3": tv("inception_v3", size=96, aux_logits=False, init_weights=True),
    "mnasnet0_5": tv("mnasnet0_5"),
    "alexnet": tv("alexnet", size=96),
    "vgg11_bn": tv("vgg11_bn", size=32),
    "resnext50_32x4d": tv("resnext50_32x4d"),
    "wide_resnet50_2": tv("wide_resnet50_2"),
    "maxvit_t": tv("maxvit_t", size=224),
    "swin_v2_t": tv("swin_v2_t"),
    "vit_b_16_small": tv("vit_b_16", size=32, image_size=32),
    "fcn_resnet50": tv("segmentation.fcn_resnet50", num_classes=4, aux_loss=False, weights_backbone=None),
    # timm
    "timm_resnet26d": timm_model("resnet26d"),
    "timm_efficientnet_b0": timm_model("efficientnet_b0"),
    "timm_convnext_atto": timm_model("convnext_atto"),
    "timm_vit_tiny": timm_model("vit_tiny_patch16_224", img_size=32, patch_size=8),
    "timm_deit_tiny": timm_model("deit_tiny_patch16_224", img_size=32, patch_size=8),
    "timm_mobilevit_xxs": timm_model("mobilevit_xxs"),
    "timm_regnetx_002": timm_model("regnetx_002"),
    "timm_cspresnet50": timm_model("cspresnet50"),
    "timm_edgenext_xx_small": timm_model("edgenext_xx_small"),
    "timm_levit_128s": timm_model("levit_128s", img_size=64),
    "timm_poolformer_s12": timm_model("poolformer_s12"),
    "timm_ghostnet_100": timm_model("ghostnet_100"),
    "timm_mixer_s16": timm_model("mixer_s16_224", img_size=64),
    "timm_dla34": timm_model("dla34"),
    "timm_rexnet_100": timm_model("rexnet_100"),
    "timm_hrnet_w18_small": timm_model("hrnet_w18_small"),
    "timm_coat_lite_tiny": timm_model("coat_lite_tiny", img_size=64),
    "timm_pvt_v2_b0": timm_model("pvt_v2_b0"),
    "timm_efficientformer_l1": timm_model("efficientformer_l1", img_size=64),
    "timm_fastvit_t8": timm_model("fastvit_t8"),
    "timm_mobilenetv4": timm_model("mobilenetv4_conv_small"),
    "timm_eva02_tiny": timm_model("eva02_tiny_patch14_224", img_size=56),
    "timm_caformer_s18": timm_model("caformer_s18"),
    "timm_xcit_nano": timm_model("xcit_nano_12_p16_224", img_size=64),
    "timm_tresnet_m": timm_model("tresnet_m"),
    "timm_nfnet_l0": timm_model("nfnet_l0"),
    "timm_res2net50": timm_model("res2net50_26w_4s"),
    "timm_sknet": timm_model("skresnet18"),
    "timm_gcvit_xxtiny": timm_model("gcvit_xxtiny", img_size=64),
    "timm_repvit_m1": timm_model("repvit_m1"),
}

# --- export -----------------------------------------------------------------

SIZES = {  # (batch, seq) at the example size and the two checked sizes
    "text": [(2, 12), (1, 5), (4, 23)],
    "seq2seq": [(2, 12), (1, 5), (3, 17)],
    "speech": [(2, 12), (1, 12), (3, 12)],
    "vision": [(2, 0), (1, 0), (3, 0)],
}


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def flat_outputs(out):
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def describe(tensors, prefix):
    return [{"name": f"{prefix}{i}", "dtype": dtype_name(t), "shape": list(t.shape)} for i, t in enumerate(tensors)]


def save_tensors(path, tensors, prefix):
    save_file({f"{prefix}{i}": t.contiguous() for i, t in enumerate(tensors)}, path)


def dynamic_shapes(model, kind, inputs):
    """The specs of `model.forward`'s parameters: `Outputs.forward` takes
    `*args` (one tuple of specs), `Seq2Seq.forward` takes two tensors."""
    specs = arg_shapes(kind, inputs)
    return specs if isinstance(model, Seq2Seq) else (specs,)


def arg_shapes(kind, inputs):
    from torch.export import Dim

    batch = Dim("batch", min=1, max=8)
    if kind == "vision":
        return tuple({0: batch} for _ in inputs)
    if kind == "speech":
        return ({0: batch}, {0: batch})
    seq = Dim("seq", min=2, max=32)
    if kind == "seq2seq":
        return ({0: batch, 1: seq}, {0: batch, 1: Dim("dec", min=2, max=16)})
    return tuple({0: batch, 1: seq} for _ in inputs)


def max_diff(a, b):
    return max((float((x.double() - y.double()).abs().max()) if x.numel() else 0.0) for x, y in zip(a, b))


def export_one(name, build, form, out_dir, seed):
    torch.manual_seed(seed)
    model, make_inputs, kind = build()
    model.eval()
    bf16 = form == "bf16"
    if bf16:
        model = model.to(torch.bfloat16)
    sizes = SIZES[kind] if form == "dyn" else SIZES[kind][:1]
    torch.manual_seed(seed + 1)
    size_inputs = []
    for batch, seq in sizes:
        args = make_inputs(batch, seq)
        if bf16:
            args = tuple(a.to(torch.bfloat16) if a.is_floating_point() else a for a in args)
        size_inputs.append(args)
    args = size_inputs[0]
    start = time.time()
    with torch.no_grad():
        if form == "dyn":
            ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes(model, kind, args))
        else:
            ep = torch.export.export(model, args)
        if form != "ir":
            ep = ep.run_decompositions()
    export_s = time.time() - start
    stem = f"{name}_{form}"
    torch.export.save(ep, os.path.join(out_dir, f"{stem}.pt2"))
    info = {"model": name, "form": form, "export_s": round(export_s, 1), "sizes": []}
    worst = 0.0
    # A program is only as exact as its dtype's rounding lets it be: how
    # far PyTorch's own result lies from the same weights and inputs in
    # float64 says how much one rounding more or less anywhere (another
    # summation order) may move it. Randomly initialised deep networks
    # amplify that a lot.
    reference = copy.deepcopy(model).double()
    rounding_error = 0.0
    for k, inputs in enumerate(size_inputs):
        with torch.no_grad():
            expected = flat_outputs(model(*inputs))
            exported = flat_outputs(ep.module()(*inputs))
            try:
                wide = tuple(a.double() if a.is_floating_point() else a for a in inputs)
                rounding_error = max(rounding_error, max_diff(expected, flat_outputs(reference(*wide))))
            except Exception:  # noqa: BLE001 (a model that pins float32 somewhere)
                pass
        worst = max(worst, max_diff(expected, exported))
        files = stem if k == 0 else f"{stem}.size{k + 1}"
        save_tensors(os.path.join(out_dir, f"{files}.inputs.safetensors"), inputs, "input_")
        save_tensors(os.path.join(out_dir, f"{files}.expected.safetensors"), expected, "output_")
        info["sizes"].append({"files": files, "inputs": describe(inputs, "input_"),
                              "outputs": describe(expected, "output_")})
    info["max_abs_diff_exported_vs_eager"] = worst
    info["max_abs_diff_vs_float64"] = rounding_error
    # PyTorch's own exported program agrees with eager only to `worst`
    # (rounding order differs once decomposed), and two results that each
    # lie `rounding_error` from the exact one may lie twice that apart: no
    # tighter bound is fair.
    rtol = 2e-2 if bf16 else 1e-4
    atol = max(rtol, 2 * worst, 2 * rounding_error)
    info["tolerance"] = {"bfloat16" if bf16 else "float32": {"rtol": rtol, "atol": atol}}
    info["nodes"] = len(ep.graph.nodes)
    ops = {}
    for node in ep.graph.nodes:
        if node.op == "call_function":
            ops[str(node.target)] = ops.get(str(node.target), 0) + 1
    with open(os.path.join(out_dir, f"{stem}.ops.txt"), "w") as f:
        for target in sorted(ops):
            f.write(f"{target} {ops[target]}\n")
    return stem, info


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--forms", default="core,ir,dyn")
    parser.add_argument("--only", default="")
    parser.add_argument("--list", action="store_true")
    opts = parser.parse_args()
    if opts.list:
        print("\n".join(MODELS))
        return
    os.makedirs(opts.out_dir, exist_ok=True)
    index_path = os.path.join(opts.out_dir, "models.json")
    index = json.load(open(index_path)) if os.path.exists(index_path) else {}
    names = opts.only.split(",") if opts.only else list(MODELS)
    for name in names:
        seed = 1000 + list(MODELS).index(name)
        for form in opts.forms.split(","):
            try:
                stem, info = export_one(name, MODELS[name], form, opts.out_dir, seed)
            except Exception as e:  # a model this PyTorch cannot export
                msg = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()
                print(f"SKIP {name}_{form}: {msg[0][:300] if msg else e}", flush=True)
                continue
            index[stem] = info
            print(f"ok   {stem} ({info['nodes']} nodes, {info['export_s']} s, "
                  f"exported vs eager {info['max_abs_diff_exported_vs_eager']:.1e})", flush=True)
            with open(index_path, "w") as f:
                json.dump(index, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
