// The placement kernels of bench/placement.hpp for buddy-split and its naive reference.

#include "placement.hpp"

namespace {

using namespace topoblock;
using namespace topoblock::bench;

const bool registered = [] {
    register_policy<buddy_split>("buddy-split");
    register_policy<buddy_split>("buddy-split-naive", naive(buddy_split{}));
    return true;
}();

}  // namespace
