// The placement kernels of bench/placement.hpp for slurm-block and its naive reference.

#include "placement.hpp"

namespace {

using namespace topoblock;
using namespace topoblock::bench;

const bool registered = [] {
    register_policy<slurm_block>("slurm-block");
    register_policy<slurm_block>("slurm-block-naive", naive(slurm_block{}));
    return true;
}();

}  // namespace
