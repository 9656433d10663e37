// contiguous-block: worked examples on GB200 NVL72 racks (18 trays x 4
// GPUs; trays gb01-gb18 form rack01, gb19-gb36 rack02, ...).

#include "describe.hpp"
#include "reference/contiguous_block.hpp"

#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace test_policy_contiguous_block {

using namespace topoblock;
using topoblock::test::place;

namespace {

allocator<contiguous_block> racks(std::string_view spec, std::uint32_t block_gpus = 8) {
    auto a = allocator<contiguous_block>::create(*parse_topology_spec(spec), contiguous_block{block_gpus});
    REQUIRE(a);
    REQUIRE(testing::check_indexes(a->policy(), a->state()).empty());
    return std::move(*a);
}

// Domains and block sizes whose layouts have and lack a short last block,
// one with it alone and one of nodes whose GPUs do not divide the block:
// what the run walks are checked on against the reference's block-by-block
// ones.
const std::pair<domain_info, std::uint32_t> shapes[] = {
    {{"rack", 0, 18, 4}, 8}, {{"rack", 0, 18, 4}, 16}, {{"rack", 0, 18, 4}, 24},
    {{"rack", 0, 11, 4}, 12}, {{"hgx", 0, 1, 8}, 16},  {{"odd", 0, 10, 3}, 8}, {{"rack", 0, 18, 4}, 48},
    // Sub-blocks of two trays with a short last one: NVL36, and 15 trays.
    {{"nvl36", 0, 9, 4}, 8}, {{"odd", 0, 15, 4}, 8},
};

// Each layout of `shapes` with every set of free sub-blocks.
template <class Blocks, class F>
void for_every_free_set(F&& f) {
    for (const auto& [info, block_gpus] : shapes) {
        const auto l = detail::block_layout::of(info, block_gpus);
        for (std::uint64_t bits = 0; bits < std::uint64_t{1} << l.count(); ++bits) {
            Blocks free;
            free.set_word(0, bits);
            f(info, l, free);
        }
    }
}

// The first need and set of free sub-blocks for which best_window and
// the reference's try of every start choose different windows, as text.
template <class Blocks>
std::string windows_disagree() {
    std::string wrong;
    for_every_free_set<Blocks>([&](const domain_info& info, const detail::block_layout& l, const Blocks& free) {
        for (std::uint64_t need = 1; wrong.empty() && need <= info.gpu_count() + 1; ++need) {
            const auto runs = detail::best_window(l, free, need);
            const auto scan = test::best_window_by_every_start(l, free, need);
            if (runs.first != scan.first || runs.blocks != scan.blocks || runs.gpus != scan.gpus ||
                runs.run_gpus != scan.run_gpus)
                wrong = info.name + " blocks of " + std::to_string(l.nodes_per_block) + " nodes, free " +
                        std::to_string(free.word(0)) + ", need " + std::to_string(need);
        }
    });
    return wrong;
}

}  // namespace

TEST_CASE("contiguous-block: sub-block layout of an 18-tray rack") {
    const domain_info rack{"rack01", 0, 18, 4};
    const auto eight = detail::block_layout::of(rack, 8);
    CHECK(eight.nodes_per_block == 2);
    CHECK(eight.count() == 9);
    CHECK(eight.tail_nodes == 0);
    const auto sixteen = detail::block_layout::of(rack, 16);
    CHECK(sixteen.nodes_per_block == 4);
    CHECK(sixteen.full_blocks == 4);
    CHECK(sixteen.tail_nodes == 2);  // the remainder: trays 17-18, a short fifth block
    CHECK(sixteen.gpus_of(4) == 8);
    const domain_info hgx{"hgx01", 0, 1, 8};
    CHECK(detail::block_layout::of(hgx, 8).count() == 1);
    CHECK(detail::block_layout::of(hgx, 16).tail_nodes == 1);  // a server is its own short block
}

TEST_CASE("contiguous-block: the window chosen a run at a time is the scan's") {
    CHECK(windows_disagree<fixed_bitset<64>>() == "");
    CHECK(windows_disagree<fixed_bitset<128>>() == "");
}

// Free sub-blocks and their summary from sets of wholly free nodes of one
// word and of two words, against a test of each block's nodes one by one
// and the reference's block-by-block summary, for every set of free nodes
// of the layouts above (up to 18 nodes).
TEST_CASE("contiguous-block: free sub-blocks are the blocks whose every node is free") {
    std::string wrong;
    for (const auto& [info, block_gpus] : shapes) {
        const auto l = detail::block_layout::of(info, block_gpus);
        for (std::uint64_t bits = 0; wrong.empty() && bits < std::uint64_t{1} << info.node_count; ++bits) {
            fixed_bitset<64> one_word;
            fixed_bitset<128> two_words;
            one_word.set_word(0, bits);
            two_words.set_word(0, bits);
            fixed_bitset<64> expected;
            for (std::uint32_t b = 0; b < l.count(); ++b) {
                bool all = true;
                for (std::uint32_t i = l.first_node(b); i < l.first_node(b) + l.nodes_of(b); ++i)
                    all = all && ((bits >> i) & 1U) != 0;
                expected.assign(b, all);
            }
            const auto summary = test::summarize_block_by_block(l, expected);
            const auto from_one = detail::free_blocks_among(one_word, l);
            const auto from_two = detail::free_blocks_among(two_words, l);
            const auto one = detail::summarize_blocks(l, from_one), two = detail::summarize_blocks(l, from_two);
            if (!(from_one == expected) || from_two.word(0) != expected.word(0) || from_two.word(1) != 0 ||
                one.free_blocks != summary.free_blocks || one.longest_run_gpus != summary.longest_run_gpus ||
                two.free_blocks != summary.free_blocks || two.longest_run_gpus != summary.longest_run_gpus)
                wrong = info.name + " blocks of " + std::to_string(l.nodes_per_block) + " nodes, free nodes " +
                        std::to_string(bits);
        }
    }
    CHECK(wrong == "");
}

TEST_CASE("contiguous-block: a 4-GPU job holds a whole 8-GPU sub-block") {
    auto a = racks("nvl72:1");
    const auto id = a.try_allocate(request::gpus(4));
    REQUIRE(id);
    const allocation_record* r = a.find(*id);
    CHECK(topoblock::test::describe(a.topo(), r->pieces) == "gb01 gb02");
    CHECK(r->requested_gpus == 4);
    CHECK(r->held_gpus == 8);
    const auto waste = internal_fragmentation_of(a.state());
    CHECK(waste.idle_held_gpus == 4);
    CHECK(waste.share_of_held == doctest::Approx(0.5));
    // A second one takes the next sub-block: the idle half of the first is
    // not offered to anyone.
    CHECK(place(a, request::gpus(4)) == "gb03 gb04");
    CHECK(internal_fragmentation_of(a.state()).idle_held_gpus == 8);
    CHECK(a.state().available().gpus == 56);
}

TEST_CASE("contiguous-block: node requests round up to sub-blocks too") {
    auto a = racks("nvl72:1");
    const auto id = a.try_allocate(request::nodes(3));
    REQUIRE(id);
    CHECK(topoblock::test::describe(a.topo(), a.find(*id)->pieces) == "gb01 gb02 gb03 gb04");
    CHECK(a.find(*id)->requested_gpus == 12);
    CHECK(a.find(*id)->held_gpus == 16);
    CHECK(internal_fragmentation_of(a.state()).idle_held_gpus == 4);
}

TEST_CASE("contiguous-block: the remainder of 4-tray sub-blocks holds small jobs or ends a run") {
    auto a = racks("nvl72:1", 16);
    // The 2-tray remainder holds a 4-GPU job with 8 GPUs instead of 16.
    CHECK(place(a, request::gpus(4)) == "gb17 gb18");
    CHECK(a.state().held_gpus() == 8);
    CHECK(place(a, request::gpus(64)) == "gb01 gb02 gb03 gb04 gb05 gb06 gb07 gb08 gb09 gb10 gb11 gb12 gb13 gb14 gb15 gb16");

    auto b = racks("nvl72:1", 16);
    // 20 GPUs: the last full block plus the remainder (24 GPUs) beats two
    // full blocks (32).
    CHECK(place(b, request::gpus(20)) == "gb13 gb14 gb15 gb16 gb17 gb18");
    CHECK(b.state().held_gpus() == 24);

    auto c = racks("nvl72:1", 16);
    // The whole rack is four blocks and the remainder: a 72-GPU job fits.
    const auto id = c.try_allocate(request::gpus(72));
    REQUIRE(id);
    CHECK(c.find(*id)->held_gpus == 72);
    CHECK(testing::check_indexes(c.policy(), c.state()).empty());
}

TEST_CASE("contiguous-block: a 72-GPU job cannot run on a rack with one drained tray") {
    auto one = racks("nvl72:1");
    REQUIRE(one.drain(4));  // gb05
    CHECK(one.try_allocate(request::gpus(72)).error() == errc::exceeds_healthy);

    auto two = racks("nvl72:2");
    REQUIRE(two.drain(4));   // gb05 in rack01
    REQUIRE(two.drain(30));  // gb31 in rack02
    // 136 GPUs are free, but neither rack has nine free sub-blocks.
    CHECK(two.try_allocate(request::gpus(72)).error() == errc::fragmented);
    // Around the drained tray, rack01 still offers runs of 2 and 6 blocks.
    CHECK(place(two, request::gpus(48)) == "gb07 gb08 gb09 gb10 gb11 gb12 gb13 gb14 gb15 gb16 gb17 gb18");
    CHECK(testing::check_indexes(two.policy(), two.state()).empty());
}

TEST_CASE("contiguous-block: an 80-GPU job spans two racks, rounded to sub-blocks") {
    auto a = racks("nvl72:2");
    const auto id = a.try_allocate(request::gpus(80));
    REQUIRE(id);
    const allocation_record* r = a.find(*id);
    CHECK(r->domains == 2);
    CHECK(r->held_gpus == 80);
    CHECK(r->pieces.size() == 20);  // rack01 whole, then gb19-gb20
    CHECK(a.topo().node(r->pieces.back().node).name == "gb20");

    auto b = racks("nvl72:2", 16);
    // With 4-tray blocks the 8 GPUs beyond rack01 fit rack02's remainder.
    const auto id16 = b.try_allocate(request::gpus(80));
    REQUIRE(id16);
    CHECK(b.find(*id16)->held_gpus == 80);
    CHECK(b.topo().node(b.find(*id16)->pieces[18].node).name == "gb35");
}

// 4-tray blocks cut a rack into four of 16 GPUs and a short one of 8: five
// blocks, but 72 GPUs. An exclusive job of 76 GPUs is five blocks' worth,
// yet no rack holds it: it takes a wholly free rack and the next one's
// short block, the rack beside the busy one.
TEST_CASE("contiguous-block: an exclusive job a rack's block count covers but its GPUs do not spans two racks") {
    auto a = racks("nvl72:3", 16);
    REQUIRE(a.try_allocate(request::gpus(4)));
    const auto id = a.try_allocate(request::gpus(76).with_exclusive_domain());
    REQUIRE(id);
    CHECK(a.find(*id)->domains == 2);
    CHECK(a.find(*id)->held_gpus == 80);
    CHECK(a.topo().node(a.find(*id)->pieces.front().node).name == "gb19");
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
}

TEST_CASE("contiguous-block: multi-domain jobs take aligned windows of wholly free racks") {
    // Four racks, two per leaf group: rack01-02 | rack03-04.
    auto a = racks("nvl72:4@2");
    REQUIRE(a.try_allocate(request::gpus(8)));  // rack01 is no longer wholly free
    const auto id = a.try_allocate(request::gpus(144));
    REQUIRE(id);
    // The window rack01-02 holds only 72 wholly free GPUs; rack03-04 is the
    // aligned window of two that holds the job.
    CHECK(a.topo().node(a.find(*id)->pieces.front().node).name == "gb37");
    CHECK(a.find(*id)->domains == 2);
    // 80 GPUs now need two wholly free racks: only rack02 is left.
    CHECK(a.try_allocate(request::gpus(80)).error() == errc::fragmented);
}

TEST_CASE("contiguous-block: best fit by free sub-blocks, lowest index on ties") {
    auto a = racks("nvl72:3");
    CHECK(place(a, request::gpus(16)) == "gb01 gb02 gb03 gb04");          // all tie: rack01
    CHECK(place(a, request::gpus(60)) == "gb19 gb20 gb21 gb22 gb23 gb24 gb25 gb26 gb27 gb28 gb29 gb30 gb31 gb32 gb33 gb34");
    // rack02 has 1 free block left, rack01 7, rack03 9: the 8-GPU job goes
    // to rack02.
    CHECK(place(a, request::gpus(8)) == "gb35 gb36");
    CHECK(place(a, request::gpus(8)) == "gb05 gb06");
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
}

// A domain smaller than a sub-block (a stub of one or two trays, or an empty
// block of a Slurm list) holds one short block or none. First in the
// cluster, it must not stand for the sub-block size the others are counted
// in: every job the rack holds is placed, as the reference places it.
TEST_CASE("contiguous-block: a first domain smaller than a sub-block leaves the rack's jobs placeable") {
    for (const std::uint32_t stub_trays : {0U, 1U, 2U}) {
        CAPTURE(stub_trays);
        topology_builder b;
        b.add_numbered_domain("stub", stub_trays, 4, "s", 1, 1);
        b.add_numbered_domain("rack", 18, 4, "gb", 1, 2);
        const topology topo = *b.build();
        auto a = *allocator<contiguous_block>::create(topo, contiguous_block{16});
        const auto ref = *allocator<test::contiguous_block_reference>::create(topo, test::contiguous_block_reference{16});
        for (std::uint32_t gpus = 1; gpus <= 72; ++gpus) {
            CAPTURE(gpus);
            placement fast, naive;
            const errc e = a.plan(request::gpus(gpus), fast);
            REQUIRE(e == ref.plan(request::gpus(gpus), naive));
            if (e == errc::ok) CHECK(test::describe(topo, fast.pieces()) == test::describe(topo, naive.pieces()));
        }
        CHECK(place(a, request::gpus(64)) == "gb01 gb02 gb03 gb04 gb05 gb06 gb07 gb08 gb09 gb10 gb11 gb12 gb13 gb14 gb15 gb16");
    }
}

TEST_CASE("contiguous-block: fragmented when GPUs are free but no sub-block is") {
    auto a = racks("nvl72:1");
    std::vector<allocation_id> ids;
    for (int i = 0; i < 9; ++i) ids.push_back(a.allocate(request::gpus(4)));
    CHECK(a.state().available().gpus == 0);  // every sub-block is held, half idle
    CHECK(a.try_allocate(request::gpus(4)).error() == errc::insufficient_free);
    REQUIRE(a.release(ids[4]));
    // Scatter 1-GPU usage from elsewhere over free trays: 8 GPUs free, but
    // no whole sub-block.
    const piece p{8, 0x1};  // gb09, inside the freed block
    REQUIRE(a.hold(std::span<const piece>(&p, 1)));
    CHECK(a.state().available().gpus == 7);
    CHECK(a.try_allocate(request::gpus(4)).error() == errc::fragmented);
    CHECK(external_fragmentation(a, request::gpus(1)) == doctest::Approx(1.0));
    CHECK(largest_placeable(a) == 0);
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
}

// The summary is kept from the free sub-blocks, not the free trays: a tray
// that goes down and up beside a busy one of its sub-block changes the
// wholly free trays but no free sub-block.
TEST_CASE("contiguous-block: a tray changing beside a busy one of its sub-block moves no sub-block") {
    auto a = racks("nvl72:1");
    const piece p{1, 0x1};  // gb02, GPU 0: the sub-block gb01 gb02 is busy
    const auto held = a.hold(std::span<const piece>(&p, 1));
    REQUIRE(held);
    REQUIRE(a.down(0));
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    REQUIRE(a.up(0));
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    CHECK(place(a, request::gpus(8)) == "gb03 gb04");
    REQUIRE(a.release(*held));
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    CHECK(place(a, request::gpus(8)) == "gb01 gb02");
}

TEST_CASE("contiguous-block: segments are runs in one domain each") {
    auto a = racks("nvl72:2");
    REQUIRE(a.try_allocate(request::gpus(56)));  // rack01: 2 free blocks left
    const auto id = a.try_allocate(request::gpus(24).with_segment(12));
    REQUIRE(id);
    // Each 12-GPU segment rounds up to 16: both fit rack01's last run.
    CHECK(topoblock::test::describe(a.topo(), a.find(*id)->pieces) ==
          "gb15 gb16 gb17 gb18 gb19 gb20 gb21 gb22");
    CHECK(a.find(*id)->held_gpus == 32);
    CHECK(a.find(*id)->requested_gpus == 24);
    auto b = racks("nvl72:2");
    const auto spread = b.try_allocate(request::gpus(16).with_segment(8, true));
    REQUIRE(spread);
    CHECK(b.find(*spread)->domains == 2);
}

TEST_CASE("contiguous-block: exclusive jobs take idle racks only") {
    auto a = racks("nvl72:2");
    REQUIRE(a.try_allocate(request::gpus(4)));
    CHECK(place(a, request::gpus(4).with_exclusive_domain()) == "gb19 gb20");
    // Both racks are now closed to other jobs.
    CHECK(a.try_allocate(request::gpus(8).with_exclusive_domain()).error() == errc::fragmented);
    CHECK(place(a, request::gpus(8)) == "gb03 gb04");
}

TEST_CASE("contiguous-block: the command line registry builds it with its block size") {
    policy_settings settings;
    settings.block_gpus = 16;
    std::uint32_t seen = 0;
    CHECK(with_policy("contiguous-block", settings, [&](auto policy) {
        if constexpr (std::is_same_v<decltype(policy), contiguous_block>) seen = policy.block_gpus();
    }));
    CHECK(seen == 16);
    bool buddy = false;
    CHECK(with_policy("buddy-split", settings, [&](auto policy) {
        buddy = std::is_same_v<decltype(policy), buddy_split>;
    }));
    CHECK(buddy);
}

// The same four jobs on two empty racks under the three domain-aware
// policies; docs/policies.md draws the racks.
TEST_CASE("block policies and best-fit place one sequence differently") {
    const request jobs[] = {request::gpus(4), request::gpus(16), request::gpus(2), request::nodes(3)};
    auto bf = *allocator<best_fit>::create(*parse_topology_spec("nvl72:2"));
    auto cb = racks("nvl72:2");
    auto bs = *allocator<buddy_split>::create(*parse_topology_spec("nvl72:2"));
    const char* best[] = {"gb01", "gb02 gb03 gb04 gb05", "gb06[0,1]", "gb07 gb08 gb09"};
    const char* block[] = {"gb01 gb02", "gb03 gb04 gb05 gb06", "gb07 gb08", "gb09 gb10 gb11 gb12"};
    const char* buddy[] = {"gb17", "gb01 gb02 gb03 gb04", "gb18[0,1]", "gb05 gb06 gb07 gb08"};
    for (int i = 0; i < 4; ++i) {
        CAPTURE(i);
        CHECK(place(bf, jobs[i]) == best[i]);
        CHECK(place(cb, jobs[i]) == block[i]);
        CHECK(place(bs, jobs[i]) == buddy[i]);
    }
    CHECK(bf.state().held_gpus() == 34);
    CHECK(cb.state().held_gpus() == 48);  // 4 -> 8, 2 -> 8, 3 trays -> 4
    CHECK(bs.state().held_gpus() == 38);  // 3 trays -> 4
    CHECK(internal_fragmentation_of(cb.state()).idle_held_gpus == 14);
    CHECK(internal_fragmentation_of(bs.state()).idle_held_gpus == 4);
    CHECK(testing::check_indexes(bs.policy(), bs.state()).empty());
}

// Regression: a sub-block of 4294967293 GPUs made the layout's node count
// wrap to 0 (a divide by zero), and from 4294967225 up a product of it
// wrapped and attach wrote past a table. Sizes a topology cannot use are
// refused when the allocator is built, with what was wrong.
TEST_CASE("contiguous-block: a sub-block size the topology cannot use is refused by create") {
    const topology two_racks = *parse_topology_spec("nvl72:2");
    const auto refusal = [&](std::uint32_t block_gpus) {
        auto a = allocator<contiguous_block>::create(two_racks, contiguous_block{block_gpus});
        return a ? std::string() : a.error().to_string();
    };
    for (std::uint32_t huge : {4294967295U, 4294967293U, 4294967225U, 73U}) {
        CAPTURE(huge);
        CHECK(refusal(huge) == "contiguous-block: a sub-block of " + std::to_string(huge) +
                                   " GPUs is larger than every domain (the largest holds 72 GPUs)");
    }
    CHECK(refusal(0) == "contiguous-block: the sub-block size must be at least 1 GPU");
    CHECK(refusal(6) == "contiguous-block: a sub-block of 6 GPUs is not a whole number of the 4-GPU nodes of domain 'rack01'");
    // Sizes that suit: a whole domain, a node or less, whole nodes.
    for (std::uint32_t fine : {72U, 1U, 3U, 4U, 8U, 16U, 24U, 36U}) {
        CAPTURE(fine);
        CHECK(refusal(fine).empty());
    }
    // A domain smaller than the sub-block is one short block (HGX servers
    // beside racks, 16-GPU sub-blocks): not an error while some domain
    // holds a whole one. 12 GPUs are no whole number of 8-GPU nodes.
    const topology mixed = *parse_topology_spec("nvl72:1+hgx8:2");
    CHECK(allocator<contiguous_block>::create(mixed, contiguous_block{16}).has_value());
    auto twelve = allocator<contiguous_block>::create(mixed, contiguous_block{12});
    REQUIRE_FALSE(twelve.has_value());
    CHECK(twelve.error().message.find("12 GPUs is not a whole number of the 8-GPU nodes") != std::string::npos);
    // The layout itself stays within the domain whatever the size.
    const auto l = detail::block_layout::of(domain_info{"rack", 0, 18, 4}, 4294967293U);
    CHECK(l.nodes_per_block == 19);
    CHECK(l.full_blocks == 0);
    CHECK(l.tail_nodes == 18);
    CHECK(l.gpus_of(0) == 72);
}

// Regression: on domains of 64 one-GPU nodes in 8-node sub-blocks (no short
// block) the short block's mask was shifted by 64, undefined behaviour
// (the sanitized build reports it). The sub-blocks and their summaries are
// right on whole words: every node free, one sub-block taken, all given back.
TEST_CASE("contiguous-block: domains of 64 nodes fill whole words") {
    auto a = racks("grid:8:64:1");
    const auto five = a.try_allocate(request::gpus(5));
    REQUIRE(five);
    const piece_list& got = a.find(*five)->pieces;
    CHECK(got.size() == 8);  // one sub-block of 8 nodes
    CHECK(got.front().node == 0);
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    const auto whole = a.try_allocate(request::gpus(64));  // a whole domain: the next one
    REQUIRE(whole);
    CHECK(a.find(*whole)->pieces.front().node == 64);
    const auto two = a.try_allocate(request::gpus(128));
    REQUIRE(two);
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    REQUIRE(a.release(*five));
    REQUIRE(a.release(*whole));
    REQUIRE(a.release(*two));
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    CHECK(a.state().available().gpus == 512);
    // 64 GPUs per node: a sub-block of 8 GPUs is one node.
    auto wide = racks("grid:2:3:64");
    const auto node = wide.try_allocate(request::gpus(8));
    REQUIRE(node);
    CHECK(wide.find(*node)->held_gpus == 64);
    CHECK(testing::check_indexes(wide.policy(), wide.state()).empty());
}

}  // namespace test_policy_contiguous_block
