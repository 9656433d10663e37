// The placement kernels of bench/placement.hpp for frag-aware (learning its
// mix from the jobs placed), in a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool placement_fragmentation_aware_registered = topoblock::bench::register_policy("frag-aware", topoblock::fragmentation_aware{});

}  // namespace
