// The placement kernels of bench/placement.hpp for best-fit and its naive reference, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy_and_naive("best-fit", topoblock::best_fit{});

}  // namespace
