#include "all_headers.hpp"

int placed_in_second_unit() {
    using namespace topoblock;
    auto cluster = allocator<best_fit>::create(gb200_nvl72(1));
    if (!cluster) return -1;
    auto job = cluster->try_allocate(request::gpus(8));
    return job ? static_cast<int>(cluster->find(*job)->held_gpus) : -1;
}
