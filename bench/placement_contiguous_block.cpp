// The placement kernels of bench/placement.hpp for contiguous-block and its naive reference.

#include "placement.hpp"

namespace {

using namespace topoblock;
using namespace topoblock::bench;

const bool registered = [] {
    register_policy<contiguous_block>("contiguous-block", contiguous_block(8));
    register_policy<contiguous_block>("contiguous-block-naive", naive(contiguous_block(8)));
    return true;
}();

}  // namespace
