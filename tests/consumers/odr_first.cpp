// With odr_second.cpp: every public header in two translation units of one
// program. A function or variable a header defines without `inline` links
// twice and fails the build.
#include "all_headers.hpp"

#include <cstdio>

int placed_in_second_unit();

int main() {
    using namespace topoblock;
    auto cluster = allocator<best_fit>::create(gb200_nvl72(1));
    if (!cluster || !cluster->try_allocate(request::gpus(8))) return 1;
    if (placed_in_second_unit() != 8) return 1;
    std::puts("both units placed 8 GPUs");
    return 0;
}
