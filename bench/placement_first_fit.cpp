// The placement kernels of bench/placement.hpp for first-fit, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool placement_first_fit_registered = topoblock::bench::register_policy("first-fit", topoblock::first_fit{});

}  // namespace
