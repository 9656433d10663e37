// The placement kernels of bench/placement.hpp for first-fit.

#include "placement.hpp"

namespace {

using namespace topoblock;
using namespace topoblock::bench;

const bool registered = [] {
    register_policy<first_fit>("first-fit");
    return true;
}();

}  // namespace
