// The placement kernels of bench/placement.hpp for slurm-block, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy("slurm-block", topoblock::slurm_block{});

}  // namespace
