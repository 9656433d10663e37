// The placement kernels of bench/placement.hpp for best-fit and its naive reference.

#include "placement.hpp"

namespace {

using namespace topoblock;
using namespace topoblock::bench;

const bool registered = [] {
    register_policy<best_fit>("best-fit");
    register_policy<best_fit>("best-fit-naive", naive(best_fit{}));
    return true;
}();

}  // namespace
