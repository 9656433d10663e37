// The placement kernels of bench/placement.hpp for contiguous-block and its naive reference, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy_and_naive("contiguous-block", topoblock::contiguous_block(8));

}  // namespace
