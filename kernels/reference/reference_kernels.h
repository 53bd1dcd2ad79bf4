// The reference kernels by family. Each returns the kernel of an op of its family,
// or nullptr for an op of another family; kernel_table.cc routes every OpId to
// its family. Each is defined in reference/<family>.cc or a part of it,
// <family>_<part>.cc (the op's family: ops/op_families.h).
#pragma once

#include "interface/kernel.h"

namespace sg::kernels {

KernelFn elementwise_binary_kernel(ops::OpId op);  // add ... logical_or
KernelFn elementwise_unary_kernel(ops::OpId op);   // neg ... isnan
KernelFn select_kernel(ops::OpId op);              // where, clip (elementwise_select.cc)
KernelFn reduction_kernel(ops::OpId op);           // sum ... argmin
KernelFn matmul_kernel(ops::OpId op);             // matmul (linalg_matmul.cc)
KernelFn shape_kernel(ops::OpId op);               // reshape ... concatenate, shape_dim
KernelFn slice_take_kernel(ops::OpId op);          // slice, take, slice_update, scatter_add (indexing.cc)
KernelFn cast_op_kernel(ops::OpId op);             // cast (elementwise_cast.cc)
KernelFn softmax_kernel(ops::OpId op);             // softmax, log_softmax (nn.cc)
KernelFn conv_pool_kernel(ops::OpId op);           // conv2d, max_pool2d, avg_pool2d (nn_conv_pool.cc)
KernelFn ordering_kernel(ops::OpId op);            // cumsum, sort, argsort, topk
KernelFn tile_pad_kernel(ops::OpId op);            // tile, pad (shape_tile_pad.cc)
KernelFn creation_kernel(ops::OpId op);            // full, eye, arange, one_hot
KernelFn layer_norm_kernel(ops::OpId op);         // layer_norm (nn.cc)
KernelFn effect_kernel(ops::OpId op);             // print, assert
KernelFn fused_kernel(ops::OpId op);              // fully_connected, conv2d_bias, elementwise_chain
KernelFn random_kernel_of(ops::OpId op);          // random (random.h)
KernelFn scan_search_kernel(ops::OpId op);        // cumprod, searchsorted (ordering.cc)
KernelFn scatter_nonzero_kernel(ops::OpId op);    // scatter, flat_nonzero (indexing_scatter.cc)
// flat_nonzero's count (kernel_table.cc's reported_dims routes here).
Status scatter_nonzero_reported_dims(ops::OpId op, std::span<const TensorRef> in, std::vector<int64_t>& dims);
KernelFn linalg_kernel(ops::OpId op);             // inv ... eigh (linalg.cc)

// The epilogue of the fused ops, shared with the XNNPACK backend: adds bias[c] to
// each of `rows` rows of `channels` floats, then applies `activation` (an
// ops::attr::Activation), keeping NaN as NumPy does.
void bias_activation_f32(float* data, int64_t rows, int64_t channels, const float* bias, int64_t activation);

// Scratch bytes of sort, argsort and topk (one index per element of the axis);
// 0 for every other op.
size_t ordering_scratch_size(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs);
// Scratch bytes of the linalg kernels (one matrix's work in double); 0 for other ops.
size_t linalg_scratch_size(ops::OpId op, std::span<const TensorRef> inputs);

}  // namespace sg::kernels
