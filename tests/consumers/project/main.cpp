// What a consumer build must be able to do: place a job in one NVLink
// domain, read a hostlist, and give the job back.
#include <topoblock/io/hostlist.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdio>

int main() {
    using namespace topoblock;
    auto cluster = allocator<best_fit>::create(gb200_nvl72(2));
    if (!cluster) return std::puts("cannot build the cluster"), 1;
    auto job = cluster->try_allocate(request::gpus(16));
    if (!job) return std::printf("not placed: %s\n", describe(job.error()).data()), 1;
    const allocation_record* record = cluster->find(*job);
    if (record == nullptr || record->domains != 1 || record->held_gpus != 16) return std::puts("wrong placement"), 1;
    auto names = io::expand_hostlist("gb[001-003]");
    if (!names || names->size() != 3 || (*names)[2] != "gb003") return std::puts("wrong hostlist"), 1;
    if (!cluster->release(*job)) return std::puts("release failed"), 1;
    std::printf("consumer: topoblock %d.%d.%d placed and released 16 GPUs\n", version_major, version_minor,
                version_patch);
    return 0;
}
