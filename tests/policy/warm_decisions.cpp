// Every policy keeps the lists a decision needs between decisions: once a
// decision of a size has been made, deciding again (the next job of a
// running cluster) allocates nothing. Counted by replacing the global
// operator new for this test binary; it counts only while asked to.

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

// Under AddressSanitizer the sanitizer's own operator new and delete must
// stay: it serves the forms not replaced here (the nothrow one, which
// std::stable_sort's buffer uses) and reports a mismatch when this file's
// free() releases that memory. There the counting tests are skipped; every
// other build runs them.
#if defined(__SANITIZE_ADDRESS__)
#define TOPOBLOCK_TEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOPOBLOCK_TEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef TOPOBLOCK_TEST_COUNTS_ALLOCATIONS
#define TOPOBLOCK_TEST_COUNTS_ALLOCATIONS 1
#endif

namespace {
thread_local bool counting = false;
thread_local std::size_t allocations = 0;
}  // namespace

#if TOPOBLOCK_TEST_COUNTS_ALLOCATIONS
// GCC 12 takes a replaced operator delete that frees what the replaced
// operator new took from malloc for a mismatch, once both are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
    if (counting) ++allocations;
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

using namespace topoblock;

namespace {

template <class Policy>
void check_warm_decisions_allocate_nothing(Policy policy, std::uint32_t racks_per_group) {
    auto alloc = std::move(*allocator<Policy>::create(gb200_nvl72(64, racks_per_group), std::move(policy)));
    // Partly used racks, so that the large jobs take whole and partial racks.
    for (std::uint32_t i = 0; i < 60; ++i) (void)alloc.try_allocate(request::gpus(1 + (i * 37) % 72));
    const std::vector<request> jobs = {request::gpus(1152), request::gpus(144), request::gpus(1000),
                                       request::gpus(288),  request::gpus(576), request::gpus(7),
                                       request::nodes(40),  request::gpus(2000)};
    placement out;
    std::vector<errc> first;
    for (const request& r : jobs) first.push_back(alloc.plan(r, out));
    CHECK(first.front() == errc::ok);
    std::vector<errc> again;
    again.reserve(jobs.size());
    allocations = 0;
    counting = true;
    for (const request& r : jobs) again.push_back(alloc.plan(r, out));
    counting = false;
    CHECK(again == first);
    CHECK(allocations == 0);
}

}  // namespace

TEST_CASE("a warm multi-domain decision allocates nothing, racks alone and in leaf groups" *
          doctest::skip(!TOPOBLOCK_TEST_COUNTS_ALLOCATIONS)) {
    for (std::uint32_t group : {0U, 16U}) {
        CAPTURE(group);
        SUBCASE("best-fit") { check_warm_decisions_allocate_nothing(best_fit{}, group); }
        SUBCASE("first-fit") { check_warm_decisions_allocate_nothing(first_fit{}, group); }
        SUBCASE("contiguous-block") { check_warm_decisions_allocate_nothing(contiguous_block(8), group); }
        SUBCASE("buddy-split") { check_warm_decisions_allocate_nothing(buddy_split{}, group); }
        SUBCASE("slurm-block") { check_warm_decisions_allocate_nothing(slurm_block{}, group); }
    }
}

TEST_CASE("the counting operator new counts" * doctest::skip(!TOPOBLOCK_TEST_COUNTS_ALLOCATIONS)) {
    allocations = 0;
    counting = true;
    void* p = ::operator new(64);
    std::vector<std::uint64_t> grown;
    for (std::uint64_t i = 0; i < 100; ++i) grown.push_back(i);
    counting = false;
    ::operator delete(p);
    CHECK(grown.back() == 99);
    CHECK(allocations >= 2);
}
