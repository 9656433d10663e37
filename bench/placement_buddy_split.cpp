// The placement kernels of bench/placement.hpp for buddy-split, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy("buddy-split", topoblock::buddy_split{});

}  // namespace
