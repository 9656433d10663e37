// The placement kernels of bench/placement.hpp for buddy-split and its naive reference, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy_and_naive("buddy-split", topoblock::buddy_split{});

}  // namespace
