// The placement kernels of bench/placement.hpp for buddy-split, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool placement_buddy_split_registered = topoblock::bench::register_policy("buddy-split", topoblock::buddy_split{});

}  // namespace
