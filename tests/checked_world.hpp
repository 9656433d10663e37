#pragma once

// The allocator and the reference model in step: the public one
// (topoblock/testing/checked_world.hpp), under the names the randomized
// tests use. Used by the randomized walk (tests/allocator/differential.cpp),
// the exhaustive small worlds (tests/allocator/exhaustive.cpp) and the
// stateful fuzz target (tests/fuzz/allocator_ops.cpp).

#include "reference_model.hpp"

#include <topoblock/testing/checked_world.hpp>

namespace topoblock::test {

using testing::checked_world;
using testing::compare;
using testing::fingerprint;
using testing::fingerprint_of;
using testing::model_pieces;
using testing::to_pairs;

}  // namespace topoblock::test
