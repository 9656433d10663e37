// Comma-separated name lists (support/name_list.hpp).

#include <topoblock/support/name_list.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace test_support_name_list {

using topoblock::detail::split_list;

TEST_CASE("name list: each name once in first-seen order, the repeated ones reported once") {
    std::vector<std::string> repeated;
    CHECK(split_list("best-fit,first-fit,best-fit,,slurm-block,best-fit,first-fit", repeated) ==
          std::vector<std::string>{"best-fit", "first-fit", "slurm-block"});
    CHECK(repeated == std::vector<std::string>{"best-fit", "first-fit"});
    repeated.clear();
    CHECK(split_list("", repeated).empty());
    CHECK(split_list(",,,", repeated).empty());
    CHECK(split_list("a", repeated) == std::vector<std::string>{"a"});
    CHECK(repeated.empty());
    // Many names: each kept once.
    std::string many;
    for (int i = 0; i < 20000; ++i) many += std::to_string(i % 1000) + ",";
    CHECK(split_list(many, repeated).size() == 1000);
    CHECK(repeated.size() == 1000);
}

}  // namespace test_support_name_list
