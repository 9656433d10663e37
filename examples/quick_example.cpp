#include <topoblock/topoblock.hpp>
#include <cstdio>

int main() {
    using namespace topoblock;
    auto cluster = allocator<best_fit>::create(gb200_nvl72(4));  // 4 racks x 72 GPUs
    auto job = cluster->try_allocate(request::gpus(16));         // stays in one NVLink domain
    if (!job) return std::printf("waits: %s\n", describe(job.error()).data()), 1;
    for (const piece& p : cluster->find(*job)->pieces)
        std::printf("%s GPUs %#llx\n", cluster->topo().node(p.node).name.c_str(),
                    static_cast<unsigned long long>(p.gpus));
    return cluster->release(*job) ? 0 : 1;
}
