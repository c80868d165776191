"""Torch op and dtype names as the tracer and torch.profiler spell them, grouped by the kernel
model that costs them (`frontend.opmap` holds the rules; these are its tables)."""

from __future__ import annotations

# torch dtype spellings (tracer: str(torch.bfloat16); chrome trace: "c10::BFloat16") -> perfmodel
DTYPE_NAMES = {
    "torch.bfloat16": "bf16",
    "c10::BFloat16": "bf16",
    "torch.float16": "fp16",
    "c10::Half": "fp16",
    "torch.float32": "fp32",
    "float": "fp32",
    "torch.float64": "fp64",
    "double": "fp64",
    "torch.float8_e4m3fn": "fp8",
    "torch.float8_e4m3fnuz": "fp8",
    "torch.float8_e5m2": "fp8",
    "torch.float8_e5m2fnuz": "fp8",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "torch.int8": "int8",
    "signed char": "int8",
}
# integer spellings -> perfmodel's integer types (bool and uint8 take a byte, as int8 does). An op
# whose tensors are all integer (position ids, index arithmetic, a cumsum over a mask) computes on
# integers; beside a float tensor (a comparison's bool output, argmax's indices) the float type wins.
INTEGER_NAMES = {
    "torch.int64": "int64", "long int": "int64", "torch.int32": "int32", "int": "int32", "torch.int16": "int16",
    "short int": "int16", "torch.bool": "int8", "bool": "int8", "torch.uint8": "int8", "unsigned char": "int8",
}

# A c10::ScalarType by its name (c10/core/ScalarType.h), as c10d records a collective's ``dtype``:
# (bytes per element, our dtype where there is one).
SCALAR_TYPES = {
    "Byte": (1, None), "Char": (1, "int8"), "Bool": (1, None), "Short": (2, None), "UInt16": (2, None),
    "Int": (4, None), "UInt32": (4, None), "Long": (8, None), "UInt64": (8, None), "Half": (2, "fp16"),
    "BFloat16": (2, "bf16"), "Float": (4, "fp32"), "Double": (8, "fp64"), "ComplexHalf": (4, None),
    "ComplexFloat": (8, None), "ComplexDouble": (16, None), "Float8_e5m2": (1, "fp8"), "Float8_e4m3fn": (1, "fp8"),
    "Float8_e5m2fnuz": (1, "fp8"), "Float8_e4m3fnuz": (1, "fp8"),
}

# A c10::ScalarType by its code (its place in c10/core/ScalarType.h's list: Byte 0, Char 1, Short 2,
# Int 3, Long 4, Half 5, Float 6, Double 7, ..., BFloat16 15), as a chrome trace records a dtype
# argument (arange's ``dtype=torch.long`` is ``4``): our dtype.
SCALAR_TYPE_CODES = {3: "int32", 4: "int64", 5: "fp16", 6: "fp32", 7: "fp64", 15: "bf16"}

# c10d's collective names (ProcessGroupNCCL's RECORD_PARAM_COMMS_DATA colName) -> (our collective,
# which recorded element count is the model's ``bytes``: the buffer one rank holds, see
# models/collectives.py). A barrier is an all-reduce of one byte (ProcessGroupNCCL::barrier).
C10D_COLLECTIVES = {
    "allreduce": ("allreduce", "in"), "allreduce_coalesced": ("allreduce", "in"), "barrier": ("allreduce", 1),
    "all_gather": ("allgather", "out"), "allgather": ("allgather", "out"), "_allgather_base": ("allgather", "out"),
    "allgather_into_tensor_coalesced": ("allgather", "out"), "all_gather_into_tensor_coalesced": ("allgather", "out"),
    "reduce_scatter": ("reducescatter", "in"), "_reduce_scatter_base": ("reducescatter", "in"),
    "reduce_scatter_tensor_coalesced": ("reducescatter", "in"),
    "all_to_all": ("alltoall", "in"), "all_to_allv": ("alltoall", "in"), "alltoall": ("alltoall", "in"),
    "alltoall_base": ("alltoall", "in"), "broadcast": ("broadcast", "in"), "_broadcast_oop": ("broadcast", "in"),
    "reduce": ("reduce", "in"), "_reduce_oop": ("reduce", "in"),
}

# ops that launch no kernel: views, metadata, allocation without a fill
VIEW_OPS = {
    "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "expand_as", "slice", "select",
    "unsqueeze", "squeeze", "unsqueeze_", "squeeze_", "t_", "transpose_", "as_strided_", "as_strided", "split",
    "split_with_sizes", "chunk", "unbind", "detach", "alias",
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh", "view_as", "unflatten",
    "flatten", "narrow", "_reshape_alias", "contiguous", "resolve_conj", "resolve_neg", "numpy_T", "size", "stride",
    "dim", "is_same_size", "_local_scalar_dense", "item", "result_type", "lift_fresh_copy", "to", "type_as",
    "scalar_tensor", "_has_compatible_shallow_copy_type", "set_", "record_stream", "profiler::_record_function_enter_new",
}

# elementwise ops: VALU FLOPs per output element (a mechanism count: add/mul 1, FMA 2); the
# activations and transcendentals (exp, tanh, silu, gelu, rsqrt ...) are costed from
# `models.activations` instead (VALU FLOPs and SFU ops), see `opmap._activation`
POINTWISE = {
    "add": 1, "add_": 1, "sub": 1, "sub_": 1, "mul": 1, "mul_": 1, "div": 1, "div_": 1, "neg": 1, "rsub": 1,
    "pow": 1, "abs": 1, "sign": 1, "sin": 1, "cos": 1, "threshold_backward": 1,
    "where": 1, "masked_fill": 1, "masked_fill_": 1, "clamp": 2, "clamp_min": 1, "clamp_max": 1, "maximum": 1,
    "minimum": 1, "addcmul": 2, "addcdiv": 2, "lerp": 2, "fill_": 0, "zero_": 0, "zeros_like": 0, "ones_like": 0,
    "full_like": 0, "copy_": 0, "_to_copy": 0, "clone": 0, "eq": 1, "ne": 1, "lt": 1, "gt": 1, "le": 1, "ge": 1,
    "logical_and": 1, "logical_not": 1, "bitwise_and": 1, "bitwise_not": 1, "floor_divide": 1, "remainder": 1,
    "gelu_backward": 10, "silu_backward": 6, "sigmoid_backward": 2, "tanh_backward": 2, "mul_backward": 1,
    "native_dropout_backward": 2, "dropout": 2, "hardtanh": 2, "leaky_relu": 2, "tril": 0, "triu": 0,
    "zeros": 0, "ones": 0, "full": 0, "fill": 0, "index_copy": 0, "index_put": 0,
    "mse_loss": 2,  # (x - y)^2 into a loss tensor; the mean or sum is a child op's reduction
}
# bytes per element of a second output the op writes beside its result (native_dropout's keep
# mask, a bool tensor; a chrome trace records no output shapes, so it is counted from the op name)
SECOND_OUTPUT_BYTES = {"native_dropout": 1.0}
# in-place scatters: they write the source's elements into self at the indexed places (a KV-cache
# update writes the new tokens, not the cache); the accumulating ones read those places first
SCATTER_OPS = {"index_copy_": False, "index_put_": None, "_index_put_impl_": None, "scatter_": False,
               "scatter_add_": True, "index_add_": True, "scatter_reduce_": True, "masked_scatter_": False}
# ops that write their output without reading their tensor arguments (those give a shape or are
# overwritten): a fill moves the output's bytes once
WRITE_ONLY_OPS = {"fill_", "zero_", "zeros_like", "ones_like", "full_like", "zeros", "ones", "full", "fill"}
GATHER_OPS = {"embedding", "index_select", "gather", "index", "take_along_dim", "embedding_dense_backward"}
CAT_OPS = {"cat", "stack", "_cat", "constant_pad_nd", "repeat", "roll", "flip"}
REDUCE_OPS = {"sum", "mean", "amax", "amin", "max", "min", "var_mean", "var", "std", "norm", "linalg_vector_norm", "prod", "all", "any", "argmax"}
ATTENTION_OPS = {
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_flash_attention_forward", "_efficient_attention_forward",
    "flash_attn_func", "mha_fwd", "fmha_fwd", "attention",
    "_flash_attn_forward",
}
