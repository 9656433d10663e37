// The placement kernels of bench/placement.hpp for contiguous-block, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool placement_contiguous_block_registered = topoblock::bench::register_policy("contiguous-block", topoblock::contiguous_block(8));

}  // namespace
