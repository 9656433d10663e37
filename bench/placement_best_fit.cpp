// The placement kernels of bench/placement.hpp for best-fit, in a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool placement_best_fit_registered = topoblock::bench::register_policy("best-fit", topoblock::best_fit{});

}  // namespace
