// The reference kernels by family. Each returns the kernel of an op of its family,
// or nullptr for an op of another family; kernel_table.cc routes every OpId to
// its family.
#pragma once

#include "interface/kernel.h"

namespace sg::kernels {

KernelFn elementwise_binary_kernel(ops::OpId op);  // add ... logical_or
KernelFn elementwise_unary_kernel(ops::OpId op);   // neg ... isnan
KernelFn select_kernel(ops::OpId op);              // where, clip
KernelFn reduction_kernel(ops::OpId op);           // sum ... argmin
KernelFn matmul_kernel(ops::OpId op);
KernelFn shape_kernel(ops::OpId op);               // reshape ... concatenate
KernelFn slice_take_kernel(ops::OpId op);          // slice, take, slice_update
KernelFn cast_full_kernel(ops::OpId op);           // cast, full, shape_dim
KernelFn softmax_kernel(ops::OpId op);             // softmax, log_softmax
KernelFn conv_pool_kernel(ops::OpId op);           // conv2d, max_pool2d, avg_pool2d
KernelFn ordering_kernel(ops::OpId op);            // cumsum, sort, argsort, topk
KernelFn tile_pad_kernel(ops::OpId op);            // tile, pad
KernelFn creation_kernel(ops::OpId op);            // eye, arange, one_hot
KernelFn layer_norm_kernel(ops::OpId op);
KernelFn effect_kernel(ops::OpId op);             // print, assert
KernelFn fused_kernel(ops::OpId op);              // fully_connected, conv2d_bias, elementwise_chain
KernelFn random_kernel_of(ops::OpId op);          // random (random.h)
KernelFn scan_search_kernel(ops::OpId op);        // cumprod, searchsorted
KernelFn scatter_nonzero_kernel(ops::OpId op);    // scatter, flat_nonzero
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
