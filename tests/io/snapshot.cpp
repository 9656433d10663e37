// Allocator snapshots: random streams on several topologies and every
// built-in policy, snapshotted at random points and continued beside an
// allocator that never stopped (every decision and id compared); and each
// kind of bad snapshot refused with its line named.

#include "../reference_model.hpp"

#include <topoblock/io/snapshot.hpp>
#include <topoblock/metrics/metrics.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace test_io_snapshot {

using namespace topoblock;
using topoblock::test::rng;

namespace {

request random_request(rng& r, const topology& t) {
    request q;
    if (r.chance(25)) {
        q = request::nodes(r.chance(70) ? r.between(1, 4) : r.between(1, t.max_domain_nodes() * 2));
    } else {
        const std::uint32_t sizes[] = {1, 1, 2, 4, 4, 8, 16, 3, 6, 12};
        q = request::gpus(r.chance(80) ? sizes[r.between(0, 9)] : r.between(1, t.max_domain_gpus() * 2 + 8));
        q.whole_nodes = r.chance(15);
    }
    q.where = static_cast<locality>(r.between(0, 2));
    q.exclusive_domain = r.chance(5);
    if (r.chance(8)) {
        q.segment = r.between(1, q.count);
        q.spread_segments = r.chance(50);
    }
    return q;
}

template <class A>
std::string snapshot_of(const A& a) {
    auto text = io::write_snapshot(a);
    REQUIRE(text);
    return *text;
}

// Every question a scheduler may ask gets the same answer from both.
template <class A>
void check_same_answers(const A& a, const A& b) {
    const auto& x = a.state();
    const auto& y = b.state();
    REQUIRE(y.verify().empty());
    REQUIRE(testing::check_indexes(b.policy(), y).empty());
    CHECK(snapshot_of(a) == snapshot_of(b));
    CHECK(x.allocation_count() == y.allocation_count());
    CHECK(x.available() == y.available());
    CHECK(x.held_gpus() == y.held_gpus());
    CHECK(x.requested_gpus() == y.requested_gpus());
    CHECK(x.up_gpus() == y.up_gpus());
    CHECK(x.healthy_gpus() == y.healthy_gpus());
    CHECK(x.held_gpus_on_down_nodes() == y.held_gpus_on_down_nodes());
    for (node_id n = 0; n < a.topo().node_count(); ++n) {
        REQUIRE(x.unheld_gpus(n) == y.unheld_gpus(n));
        REQUIRE(x.usable_gpus(n) == y.usable_gpus(n));
        REQUIRE(x.health(n) == y.health(n));
        for (std::uint32_t g = 0; g < a.topo().node(n).gpus; ++g) REQUIRE(x.owner(n, g) == y.owner(n, g));
    }
    for (domain_id d = 0; d < a.topo().domain_count(); ++d) {
        REQUIRE(x.domain(d) == y.domain(d));
        REQUIRE(x.domain_idle(d) == y.domain_idle(d));
    }
    x.for_each_allocation([&](allocation_id id, const allocation_record& r) {
        const allocation_record* other = y.find(id);
        REQUIRE(other != nullptr);
        CHECK(other->asked == r.asked);
        CHECK(other->requested_gpus == r.requested_gpus);
        CHECK(other->held_gpus == r.held_gpus);
        CHECK(other->domains == r.domains);
        CHECK(other->hit_by_failure == r.hit_by_failure);
        CHECK(other->pieces == r.pieces);
    });
    CHECK(utilization(x) == utilization(y));
    CHECK(largest_placeable(a) == largest_placeable(b));
    CHECK(largest_placeable(a, request::nodes(1)) == largest_placeable(b, request::nodes(1)));
    CHECK(external_fragmentation(a, request::gpus(8)) == external_fragmentation(b, request::gpus(8)));
}

// One allocator runs the stream whole; the other is saved and read back at
// random points (a restart), and each time continues from the text alone.
template <class Policy>
void run_restarts(const topology& topo, std::uint64_t seed, std::size_t operations) {
    CAPTURE(seed);
    using alloc_t = basic_allocator<Policy, default_capacity>;
    auto whole = *alloc_t::create(topo);
    auto restarted = *alloc_t::create(topo);
    rng r(seed);
    std::vector<allocation_id> live, released;
    std::size_t restarts = 0, placed = 0, hits = 0;
    for (std::size_t op = 0; op < operations; ++op) {
        CAPTURE(op);
        if (r.chance(4)) {
            const std::string text = snapshot_of(restarted);
            auto back = io::read_snapshot<Policy>(text, topo);
            REQUIRE_MESSAGE(back, back.error().to_string());
            CHECK(back->policy_name == restarted.policy_name());
            restarted = std::move(back->allocator);
            CHECK(snapshot_of(restarted) == text);
            check_same_answers(whole, restarted);
            ++restarts;
        }
        const std::uint32_t kind = r.between(1, 100);
        if (kind <= 55) {
            const request q = random_request(r, topo);
            const auto x = whole.try_allocate(q);
            const auto y = restarted.try_allocate(q);
            REQUIRE(x.has_value() == y.has_value());
            if (x) {
                REQUIRE(*x == *y);
                REQUIRE(whole.find(*x)->pieces == restarted.find(*y)->pieces);
                live.push_back(*x);
                ++placed;
            } else {
                REQUIRE(x.error() == y.error());
            }
        } else if (kind <= 85) {
            allocation_id id{r.next() | 1};
            std::size_t at = live.size();
            if (!live.empty() && r.chance(90)) id = live[at = r.between(0, static_cast<std::uint32_t>(live.size() - 1))];
            else if (!released.empty() && r.chance(70)) id = released[r.between(0, static_cast<std::uint32_t>(released.size() - 1))];
            const auto x = whole.release(id);
            const auto y = restarted.release(id);
            REQUIRE(x.has_value() == y.has_value());
            if (at < live.size()) {
                REQUIRE(x);
                released.push_back(id);
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
            }
        } else if (kind <= 96) {
            const node_id n = r.between(0, topo.node_count() - 1);
            const auto h = static_cast<node_health>(r.chance(50) ? 0 : r.between(1, 2));
            const auto x = whole.set_health(n, h);
            const auto y = restarted.set_health(n, h);
            REQUIRE(x);
            REQUIRE(y);
            REQUIRE(*x == *y);
            hits += x->size();
        } else {
            const node_id n = r.between(0, topo.node_count() - 1);
            const piece p{n, whole.state().unheld_gpus(n)};
            const auto x = whole.hold(std::span<const piece>(&p, 1));
            const auto y = restarted.hold(std::span<const piece>(&p, 1));
            REQUIRE(x.has_value() == y.has_value());
            if (x) {
                REQUIRE(*x == *y);
                live.push_back(*x);
            }
        }
    }
    check_same_answers(whole, restarted);
    // The walk must restart often, with work running and nodes failing.
    CHECK(restarts > operations / 50);
    CHECK(placed > operations / 10);
    CHECK(hits > 0);
}

#define TOPOBLOCK_SNAPSHOT_POLICIES first_fit, best_fit, contiguous_block, buddy_split, slurm_block

constexpr std::size_t stream_length = 1500;

// ---- bad snapshots --------------------------------------------------------

// The text with its checksum line written anew, so that a change inside it
// reaches the check it is meant for.
std::string resign(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    text.erase(text.rfind('\n') + 1);
    io::detail::snapshot::fnv1a64 sum;
    sum.add(text);
    return text + "checksum " + io::detail::snapshot::hex16(sum.value()) + '\n';
}

std::string replace_line(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

std::uint32_t line_of(const std::string& text, const std::string& what) {
    const std::size_t at = text.find(what);
    REQUIRE(at != std::string::npos);
    std::uint32_t line = 1;
    for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n' ? 1 : 0;
    return line;
}

// A state with something of everything: a job over whole racks, an
// exclusive one, a job on a node that went down, a drained node, freed
// slots, and a label.
struct sample {
    allocator<best_fit> a = *allocator<best_fit>::create(*parse_topology_spec("nvl72:3"));
    allocation_id racks, exclusive, small, hit;
    std::string text;
    sample() {
        racks = *a.try_allocate(request::gpus(100));
        exclusive = *a.try_allocate(request::gpus(8).with_exclusive_domain());
        small = *a.try_allocate(request::gpus(3));
        hit = *a.try_allocate(request::gpus(5));
        const auto gone = *a.try_allocate(request::gpus(2));
        REQUIRE(a.release(gone));
        REQUIRE(a.down(a.find(hit)->pieces.front().node));
        REQUIRE(a.drain(a.find(small)->pieces.front().node));
        text = *io::write_snapshot(a, {{small, "job-3 of team a"}, {racks, "j1"}});
    }
};

expected<io::restored_allocator<best_fit, default_capacity>, error> read_back(const std::string& text,
                                                                             const char* spec = "nvl72:3") {
    return io::read_snapshot<best_fit>(text, *parse_topology_spec(spec));
}

// Refused, naming `line` and saying `what`.
void check_refused(const std::string& text, std::uint32_t line, const std::string& what) {
    const auto got = read_back(text);
    REQUIRE_FALSE(got);
    CAPTURE(got.error().to_string());
    CHECK(got.error().line == line);
    CHECK(got.error().message.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE_TEMPLATE("snapshot: restarts on uniform NVL72 racks in two leaf groups continue as if never stopped", Policy,
                   TOPOBLOCK_SNAPSHOT_POLICIES) {
    run_restarts<Policy>(*parse_topology_spec("nvl72:4@2"), 11, stream_length);
}
TEST_CASE_TEMPLATE("snapshot: restarts on mixed NVL72 racks and HGX-8 servers continue as if never stopped", Policy,
                   TOPOBLOCK_SNAPSHOT_POLICIES) {
    run_restarts<Policy>(*parse_topology_spec("nvl72:2+hgx8:6"), 12, stream_length);
}
TEST_CASE_TEMPLATE("snapshot: restarts on partial racks continue as if never stopped", Policy, TOPOBLOCK_SNAPSHOT_POLICIES) {
    run_restarts<Policy>(test::partial_racks(), 13, stream_length);
}
TEST_CASE("snapshot: restarts under contiguous-block of 16 GPUs continue as if never stopped") {
    struct contiguous_block_16 : contiguous_block {
        contiguous_block_16() : contiguous_block(16) {}
    };
    run_restarts<contiguous_block_16>(*parse_topology_spec("nvl72:4@2"), 14, stream_length);
}

TEST_CASE("snapshot: a sample reads back whole, with its labels, into another policy") {
    sample s;
    const auto back = read_back(s.text);
    REQUIRE_MESSAGE(back, back.error().to_string());
    CHECK(back->policy_name == "best-fit");
    REQUIRE(back->labels.size() == 2);
    CHECK(back->labels[0] == std::pair<allocation_id, std::string>{s.racks, "j1"});
    CHECK(back->labels[1] == std::pair<allocation_id, std::string>{s.small, "job-3 of team a"});
    check_same_answers(s.a, back->allocator);
    CHECK(back->allocator.find(s.hit)->hit_by_failure);
    // The state does not depend on the policy: any other reads it too.
    const auto other = io::read_snapshot<first_fit>(s.text, *parse_topology_spec("nvl72:3"));
    REQUIRE(other);
    CHECK(*io::write_snapshot(other->allocator, other->labels) ==
          resign(replace_line(s.text, "policy best-fit", "policy first-fit")));
}

TEST_CASE("snapshot: labels that cannot be written are refused") {
    sample s;
    CHECK_FALSE(io::write_snapshot(s.a, {{allocation_id{12345}, "x"}}));
    CHECK_FALSE(io::write_snapshot(s.a, {{s.small, "a"}, {s.small, "b"}}));
    CHECK_FALSE(io::write_snapshot(s.a, {{s.small, "two\nlines"}}));
    CHECK_FALSE(io::write_snapshot(s.a, {{s.small, " padded"}}));
    CHECK_FALSE(io::write_snapshot(s.a, {{s.small, ""}}));
}

TEST_CASE("snapshot: a truncated, damaged or foreign snapshot is refused with its line") {
    sample s;
    const std::string& t = s.text;
    const std::uint32_t last = line_of(t, "checksum");
    SUBCASE("truncated") {
        const std::string cut = t.substr(0, t.find("free "));
        check_refused(cut, line_of(t, "free ") - 1, "truncated");
        check_refused("", 1, "empty");
    }
    SUBCASE("checksum that does not match") { check_refused(replace_line(t, "gpus 3 ", "gpus 4 "), last, "does not match"); }
    SUBCASE("unknown version or no magic") {
        check_refused(resign(replace_line(t, "topoblock-snapshot 1", "topoblock-snapshot 2")), 1, "version '2'");
        check_refused(resign(replace_line(t, "topoblock-snapshot 1", "slurm-snapshot 1")), 1, "not a topoblock snapshot");
    }
    SUBCASE("another topology") {
        const auto got = read_back(t, "nvl72:4");
        REQUIRE_FALSE(got);
        CHECK(got.error().line == 2);
        CHECK(got.error().message.find("another topology") != std::string::npos);
        CHECK_FALSE(read_back(t, "nvl36x2:3"));
    }
    SUBCASE("a GPU claimed twice") {
        // The small job's run claimed by the 5-GPU job too (same node, its GPUs).
        const auto small = s.a.find(s.small)->pieces.front();
        const std::string small_run = "run " + std::to_string(small.node) + " 1 " + io::detail::snapshot::hex16(small.gpus);
        const auto hit = s.a.find(s.hit)->pieces.front();
        const std::string hit_run = "run " + std::to_string(hit.node) + " 1 " + io::detail::snapshot::hex16(hit.gpus);
        const std::string twice = resign(replace_line(t, hit_run, small_run));
        const auto got = read_back(twice);
        REQUIRE_FALSE(got);
        CHECK(got.error().message.find("another allocation holds") != std::string::npos);
        CHECK(got.error().line >= line_of(t, "alloc " + std::to_string(s.small.value)));
    }
    SUBCASE("a node out of range") {
        const auto small = s.a.find(s.small)->pieces.front();
        const std::string small_run = "run " + std::to_string(small.node) + " 1 ";
        check_refused(resign(replace_line(t, small_run, "run 54 1 ")), line_of(t, small_run), "out of range");
        const std::string drained = "node " + std::to_string(small.node) + " drain";
        check_refused(resign(replace_line(t, drained, "node 4000000000 drain")), line_of(t, drained), "out of range");
    }
    SUBCASE("a duplicate id") {
        const std::string alloc = "alloc " + std::to_string(s.small.value);
        // The alloc line and its run lines.
        const std::size_t from = t.find(alloc);
        std::size_t end = t.find('\n', from) + 1;
        while (t.compare(end, 4, "run ") == 0) end = t.find('\n', end) + 1;
        const std::string block = t.substr(from, end - from);
        std::string twice = replace_line(t, block, block + block);
        twice = replace_line(twice, "slots 5", "slots 6");
        check_refused(resign(twice), line_of(twice, alloc) + 2, "named already");
    }
    SUBCASE("a count that overflows") {
        check_refused(resign(replace_line(t, "slots 5", "slots 99999999999999999999")), line_of(t, "slots"), "slot count");
        check_refused(resign(replace_line(t, "gpus 3 ", "gpus 4294967296 ")), line_of(t, "gpus 3 "), "fits 32 bits");
        check_refused(resign(replace_line(t, "slots 5", "slots 4000000000")), last, "are listed");
    }
    SUBCASE("a huge line") {
        check_refused(replace_line(t, "policy best-fit", "policy " + std::string(5000, 'x')), 3, "longer than");
    }
    SUBCASE("a job on a down node not marked hit") {
        const std::string alloc = "alloc " + std::to_string(s.hit.value);
        const std::size_t at = t.find(alloc);
        const std::size_t flag = t.find(" h ", at);
        check_refused(resign(t.substr(0, flag) + " - " + t.substr(flag + 3)), line_of(t, alloc), "not marked hit");
    }
    SUBCASE("a label of no live allocation, and a line out of order") {
        check_refused(resign(replace_line(t, "label " + std::to_string(s.racks.value), "label 77")), line_of(t, "label"),
                      "not live");
        check_refused(resign(replace_line(t, "policy best-fit\nslots 5\n", "slots 5\npolicy best-fit\n")), 3,
                      "expected the topology");
    }
    SUBCASE("a free slot with a live id's generation") {
        const std::size_t at = t.find("free ");
        const std::size_t end = t.find('\n', at);
        std::string odd = t.substr(0, t.find(' ', at + 5) + 1) + "3" + t.substr(end);
        check_refused(resign(odd), line_of(t, "free "), "generation 3");
    }
}

// Random damage, signed anew so that it reaches the reader's checks: never
// a crash, and what is accepted is a consistent state (read_snapshot
// verifies it) that saves and reads back to itself.
TEST_CASE("snapshot: randomly damaged snapshots are refused or read whole") {
    sample s;
    rng r(21);
    const std::string alphabet = "0123456789abcdefx- \nrunallocfeidhw";
    std::size_t refused = 0, accepted = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text = s.text.substr(0, s.text.rfind("checksum"));
        for (std::uint32_t k = r.between(1, 3); k > 0; --k) {
            const std::size_t at = r.between(0, static_cast<std::uint32_t>(text.size() - 1));
            const char c = alphabet[r.between(0, static_cast<std::uint32_t>(alphabet.size() - 1))];
            if (r.chance(50)) text[at] = c;
            else if (r.chance(50)) text.insert(at, 1, c);
            else text.erase(at, 1);
        }
        const auto got = read_back(resign(text + "checksum 0\n"));
        if (!got) {
            ++refused;
            CHECK(got.error().line != 0);
            continue;
        }
        ++accepted;
        const std::string again = snapshot_of(got->allocator);
        const auto twice = read_back(again);
        REQUIRE(twice);
        CHECK(snapshot_of(twice->allocator) == again);
    }
    CHECK(refused > 1000);
    CHECK(accepted > 0);
}

}  // namespace test_io_snapshot
