"""Trace a torch module on the meta device: every aten op with its shapes and dtypes, and the
module that issued it. No weights, no memory, no GPU.

- A ``TorchDispatchMode`` records each aten op (after autograd and composite decomposition).
- A ``TorchFunctionMode`` keeps ``scaled_dot_product_attention``, ``rms_norm`` and
  ``layer_norm`` as one op each (one kernel in practice) instead of their decomposition: it
  records them and switches the dispatch recorder off while they run.
- Forward pre/post hooks on every submodule keep the module path of the op being recorded.
- A convolution of a channels_last input or weight returns a channels_last output, as on a GPU
  (the meta device's convolution returns a contiguous one).
"""

from __future__ import annotations

from perfmodel.errors import InputError
from perfmodel.frontend.op_record import OpRecord


def _describe(args) -> tuple[list, list, list, list]:
    import torch

    shapes, dtypes, scalars, strides = [], [], [], []
    for a in args:
        if isinstance(a, torch.Tensor):
            shapes.append(tuple(int(d) for d in a.shape))
            dtypes.append(str(a.dtype))
            scalars.append(None)
            strides.append(tuple(int(d) for d in a.stride()) if a.layout == torch.strided else None)
        elif isinstance(a, (list, tuple)) and a and all(isinstance(t, torch.Tensor) for t in a):
            shapes.append([tuple(int(d) for d in t.shape) for t in a])
            dtypes.append(str(a[0].dtype))
            scalars.append(None)
            strides.append(None)
        else:
            shapes.append(None)
            dtypes.append(None)
            scalars.append(a if isinstance(a, (int, float, bool, str, list, tuple, type(None))) else str(a))
            strides.append(None)
    return shapes, dtypes, scalars, strides


def _outputs(out) -> tuple[list, str | None]:
    import torch

    outs = out if isinstance(out, (list, tuple)) else [out]
    shapes = [tuple(int(d) for d in t.shape) for t in outs if isinstance(t, torch.Tensor)]
    dt = next((str(t.dtype) for t in outs if isinstance(t, torch.Tensor)), None)
    return shapes, dt


KEEP_WHOLE = ("scaled_dot_product_attention", "rms_norm", "layer_norm")


class Tracer:
    """Records `OpRecord`s; use `trace(module, *inputs)`."""

    def __init__(self):
        self.records: list[OpRecord] = []
        self.stack: list[str] = [""]
        self.suppress = 0

    def add(self, op: str, args, kwargs, out) -> None:
        shapes, dtypes, scalars, strides = _describe(args)
        kw = {k: v for k, v in (kwargs or {}).items() if isinstance(v, (int, float, bool, str))}
        outs, odt = _outputs(out)
        self.records.append(
            OpRecord(op=op, module=self.stack[-1], inputs=shapes, dtypes=dtypes, scalars=scalars, kwargs=kw,
                     outputs=outs, out_dtype=odt, index=len(self.records), strides=strides)
        )


def _channels_last_conv(args, out) -> bool:
    """Whether a 2-D convolution's output is channels_last on a GPU although the meta device made
    it contiguous: cuDNN and MIOpen return channels_last where the input or the weight is
    (ATen's `cudnn_conv_suggest_memory_format`, `miopen_conv_suggest_memory_format`), the meta
    kernel always contiguous, so every op after a channels_last model's first convolution would
    read as NCHW."""
    import torch

    def nhwc(t) -> bool:
        return (isinstance(t, torch.Tensor) and t.dim() == 4 and not t.is_contiguous()
                and t.is_contiguous(memory_format=torch.channels_last))

    return isinstance(out, torch.Tensor) and out.dim() == 4 and len(args) > 1 and (nhwc(args[0]) or nhwc(args[1]))


def trace(module, *example_inputs, **example_kwargs) -> list[OpRecord]:
    """Run ``module`` on meta tensors and return the ops it issues, in order."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    from perfmodel.frontend.ops import ops

    ops()
    if not isinstance(module, torch.nn.Module):
        raise InputError(f"expected a torch.nn.Module, got {type(module).__name__}", key="module")
    if any(p.device.type != "meta" for p in module.parameters()):
        import copy

        module = copy.deepcopy(module).to("meta")
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in example_inputs]
    kwargs = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v) for k, v in example_kwargs.items()}
    tr = Tracer()
    keep = {getattr(F, n): n for n in KEEP_WHOLE if hasattr(F, n)}

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func._schema.name == "aten::convolution" and _channels_last_conv(args, out):
                tr.suppress += 1  # the copy is the meta device's, not an op of the model
                try:
                    out = out.contiguous(memory_format=torch.channels_last)
                finally:
                    tr.suppress -= 1
            if not tr.suppress:
                tr.add(func._schema.name, args, kwargs, out)
            return out

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = keep.get(func)
            if name is None or tr.suppress:
                return func(*args, **(kwargs or {}))
            tr.suppress += 1
            try:
                out = func(*args, **(kwargs or {}))
            finally:
                tr.suppress -= 1
            tr.add(f"aten::{name}", args, kwargs, out)
            return out

    names = {m: n for n, m in module.named_modules()}
    handles = []

    def pre(mod, args):
        tr.stack.append(names.get(mod, ""))

    def post(mod, args, out):
        tr.stack.pop()

    for m in names:
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    try:
        with torch.no_grad(), Function(), Dispatch():
            module(*inputs, **kwargs)
    finally:
        for h in handles:
            h.remove()
    return tr.records

