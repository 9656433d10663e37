// The placement kernels of bench/placement.hpp for slurm-block and its naive reference, in
// a file of their own (placement.hpp says why).

#include "placement.hpp"

namespace {

const bool registered = topoblock::bench::register_policy_and_naive("slurm-block", topoblock::slurm_block{});

}  // namespace
