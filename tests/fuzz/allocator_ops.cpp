// Stateful fuzz target: the input is a program of allocator operations
// (allocate requests of every shape, release live and unknown ids, hold
// pieces, health changes including nodes out of range) run on a small
// topology with one of the built-in policies, each operation checked against
// the reference model (tests/checked_world.hpp): owners, free masks and
// counters after every step, nothing changed by a failed call.
//
// Byte 0 picks the topology and the policy; then each operation is an opcode
// byte followed by its operands.

#include "../checked_world.hpp"
#include "fuzz_support.hpp"

#include <topoblock/topoblock.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace topoblock;
using topoblock::fuzz::byte_reader;

const topology& small_topology(std::uint32_t which) {
    // Two domains of four 4-GPU nodes; a mixed cluster (one domain of three
    // 4-GPU nodes, two single 8-GPU servers); partial racks of 3, 4 and 2
    // nodes under two groups.
    static const topology uniform = *parse_topology_spec("grid:2:4:4");
    static const topology mixed = *parse_topology_spec("grid:1:3:4+grid:2:1:8");
    static const topology partial = [] {
        topology_builder b;
        b.add_numbered_domain("r1", 3, 4, "a", 1, 1);
        b.add_numbered_domain("r2", 4, 4, "b", 1, 1);
        b.add_numbered_domain("r3", 2, 4, "c", 1, 1);
        b.add_level("leaf", {{"l1", {"r1", "r2"}}, {"l2", {"r3"}}});
        return *b.build();
    }();
    return which == 0 ? uniform : which == 1 ? mixed : partial;
}

request read_request(byte_reader& in, const topology& t) {
    const std::uint8_t shape = in.next();
    const std::uint32_t span = t.max_domain_gpus() * 2 + 4;
    request q = (shape & 1U) != 0 ? request::nodes(in.below(t.max_domain_nodes() * 2 + 3))
                                  : request::gpus(in.below(span));
    q.whole_nodes = (shape & 2U) != 0;
    q.where = static_cast<locality>((shape >> 2) % 3);
    q.exclusive_domain = (shape & 0x10U) != 0;
    if ((shape & 0x20U) != 0) {
        q.segment = in.below(q.count + 2);
        q.spread_segments = (shape & 0x40U) != 0;
    }
    return q;
}

template <class Policy>
void run(byte_reader& in, const topology& topo, Policy policy) {
    test::checked_world<Policy> world(topo, std::move(policy));
    const node_id nodes = topo.node_count();
    for (int step = 0; step < 256 && !in.exhausted(); ++step) {
        std::string why;
        switch (in.next() % 8) {
        case 0:
        case 1:
        case 2:
            why = world.allocate(read_request(in, topo));
            break;
        case 3: {
            const std::uint8_t which = in.next();
            if (world.live_count() > 0)
                why = world.release_live(which % world.live_count());
            break;
        }
        case 4: {
            // A released id, or one never issued (0, odd numbers, large ones).
            const std::uint8_t which = in.next();
            const auto& released = world.released();
            why = !released.empty() && (which & 1U) != 0 ? world.release_unknown(released[(which >> 1) % released.size()])
                                                         : world.release_unknown(allocation_id{in.word()});
            break;
        }
        case 5:
        case 6: {
            const node_id n = in.below(nodes + 3);
            why = world.set_health(n == nodes + 2 ? node_id{0xFFFFFFFFU} : n, static_cast<node_health>(in.below(3)));
            break;
        }
        case 7: {
            // One or two pieces; masks from the byte, so GPUs beyond the node
            // and nodes out of range come up.
            std::vector<piece> pieces;
            const std::uint32_t count = in.below(3);
            for (std::uint32_t i = 0; i < count; ++i) {
                const node_id n = in.below(nodes + 1);
                const std::uint8_t mask = in.next();
                pieces.push_back({n, mask == 0xFFU ? world.allocator().state().unheld_gpus(n < nodes ? n : 0) : gpu_mask{mask}});
            }
            why = world.hold(pieces);
            break;
        }
        }
        if (!why.empty()) topoblock::fuzz::violated(why + " (" + std::string(world.allocator().policy_name()) + ")");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    byte_reader in(data, size);
    const std::uint8_t head = in.next();
    const topology& topo = small_topology(head % 3);
    switch ((head / 3) % 6) {
    case 0: run(in, topo, first_fit{}); break;
    case 1: run(in, topo, best_fit{}); break;
    case 2: run(in, topo, contiguous_block{}); break;
    case 3:
        // 16-GPU sub-blocks: larger than every domain of the mixed cluster,
        // where create() must refuse them (and nothing else may throw).
        try {
            run(in, topo, contiguous_block{16});
        } catch (const std::runtime_error& refused) {
            topoblock::fuzz::require(&topo == &small_topology(1) &&
                                         std::string_view(refused.what()).find("larger than every domain") !=
                                             std::string_view::npos,
                                     std::string("contiguous-block{16} refused: ") + refused.what());
        }
        break;
    case 4: run(in, topo, buddy_split{}); break;
    default: run(in, topo, slurm_block{}); break;
    }
    return 0;
}
