#pragma once

#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace topoblock {

// GPUs of one node that an allocation holds.
struct piece {
    node_id node = 0;
    gpu_mask gpus = 0;
    friend constexpr bool operator==(const piece&, const piece&) = default;
};

// Where a request goes: the pieces, in the order the policy chose them. The
// allocator reuses one placement for every call, so a policy appends to it
// and never allocates once its capacity has grown.
class placement {
public:
    void clear() noexcept { pieces_.clear(); }
    // Drops the pieces added after the first `count` (an attempt given up).
    void truncate(std::size_t count) noexcept {
        if (count < pieces_.size()) pieces_.resize(count);
    }
    void add(node_id node, gpu_mask gpus) { pieces_.push_back({node, gpus}); }
    const std::vector<piece>& pieces() const noexcept { return pieces_; }
    bool empty() const noexcept { return pieces_.empty(); }
    std::size_t size() const noexcept { return pieces_.size(); }
    // GPUs already taken on `node` by this placement (policies that place
    // several parts in turn use it to avoid taking a GPU twice).
    gpu_mask taken_on(node_id node) const noexcept {
        gpu_mask taken = 0;
        for (const auto& p : pieces_)
            if (p.node == node) taken |= p.gpus;
        return taken;
    }

private:
    std::vector<piece> pieces_;
};

}  // namespace topoblock
