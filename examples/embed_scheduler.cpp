// A scheduler loop that embeds topoblock: jobs arrive in a queue, each takes a
// place inside one NVLink domain when one has room, finished jobs give their
// GPUs back. Prints who holds what.

#include <topoblock/io/hostlist.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

int main() {
    using namespace topoblock;
    auto cluster = allocator<best_fit>::create(gb200_nvl72(2));  // 2 racks, 144 GPUs
    if (!cluster) return std::puts(cluster.error().to_string().c_str()), 1;

    struct job { std::string name; request req; };
    std::deque<job> queue{{"train-a", request::gpus(64)}, {"eval-b", request::gpus(4)},
                          {"train-c", request::gpus(72)}, {"sweep-d", request::nodes(2)},
                          {"big-e", request::gpus(96)}, {"eval-f", request::gpus(1)}};
    std::vector<std::pair<std::string, allocation_id>> running;

    // The ten-line loop: place what fits, in order; stop at the first that waits.
    while (!queue.empty()) {
        auto placed = cluster->try_allocate(queue.front().req);
        if (!placed) {
            std::printf("%-8s waits: %s\n", queue.front().name.c_str(), std::string(describe(placed.error())).c_str());
            if (running.empty()) break;
            if (!cluster->release(running.front().second)) return 1;  // the oldest job finishes
            std::printf("%-8s finished\n", running.front().first.c_str());
            running.erase(running.begin());
            continue;
        }
        running.emplace_back(queue.front().name, *placed);
        queue.pop_front();
    }

    for (const auto& [name, id] : running) {
        const allocation_record& r = *cluster->find(id);
        std::vector<std::string> hosts;
        for (const auto& p : r.pieces) hosts.push_back(cluster->topo().node(p.node).name);
        std::printf("%-8s %3u GPUs in %u domain(s): %s\n", name.c_str(), r.held_gpus, r.domains,
                    io::compress_hostlist(hosts).c_str());
    }
    std::printf("utilization %.1f%%\n", 100.0 * utilization(cluster->state()));
    return cluster->state().verify().empty() ? 0 : 1;
}
