# `topoblock place`: the questions `explain ID REQUEST` and `stats`
# (docs/place.md, "Questions").
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

# Two domains of two 4-GPU nodes; 6 GPUs taken in each: 2 free in each.
set(two_by_two place --topology grid:2:2:4 --policy best-fit)
set(half_full "alloc a gpus=6\nalloc b gpus=6\n")

# A sentence's clauses are split by '\;', which the checks cannot carry
# (tests/cli/run_program.cmake): each side is checked, and the line count.
topoblock_run(NAME "explain names the binding constraint with its numbers" ARGS ${two_by_two}
  INPUT "${half_full}explain q gpus=4\nexplain r gpus=2\nexplain s nodes=3\nexplain t gpus=4 exclusive=topo\nexplain u gpus=40\n"
  STATUS 0 ERR ""
  OUT_HAS "a n[01-02] n02:0-1\nb n[03-04] n04:0-1\nq EXPLAIN 4 GPUs free, but the most in one NVLink domain is 2 (needs 4)"
          " 2 NVLink domains would hold it if their jobs ended\nr EXPLAIN placeable now\ns EXPLAIN asks 3 nodes, 0 free\nt EXPLAIN needs an idle NVLink domain per part: 0 are idle, none holds 4 GPUs"
          " 2 NVLink domains would hold it if their jobs ended\nu EXPLAIN asks 40 GPUs, the whole cluster has 16\n")
string(REGEX MATCHALL "\n" _lines "${_out}")
list(LENGTH _lines _count)
if(NOT _count EQUAL 7)
  message(FATAL_ERROR "explain: expected 7 lines, got ${_count}:\n${_out}")
endif()

# explain places nothing: the request it called placeable is placed next,
# where it would have gone without the question.
topoblock_run(NAME "explain changes nothing" ARGS ${two_by_two}
  INPUT "${half_full}explain r gpus=2\nexplain r gpus=2\nalloc r gpus=2\n"
  STATUS 0 ERR ""
  OUT "a n[01-02] n02:0-1
b n[03-04] n04:0-1
r EXPLAIN placeable now
r EXPLAIN placeable now
r n02 n02:2-3
")

topoblock_run(NAME "stats prints one line per figure" ARGS ${two_by_two}
  INPUT "${half_full}stats\nrelease b\nstats\n"
  STATUS 0 ERR ""
  OUT "a n[01-02] n02:0-1
b n[03-04] n04:0-1
STATS allocatable-gpus 1=4 2=2 3=0 4=0 5=0 6=0 7=0 8=0
STATS allocatable-nodes 1=0 2=0
STATS compaction held-gpus=12 occupied-domains=2 fewest-domains=2
STATS allocatable-gpus 1=10 2=5 3=2 4=2 5=1 6=1 7=1 8=1
STATS allocatable-nodes 1=2 2=1
STATS compaction held-gpus=6 occupied-domains=1 fewest-domains=1
")

topoblock_run(NAME "explain and stats as JSON" ARGS ${two_by_two} --json
  INPUT "${half_full}explain q gpus=4\nstats\n"
  STATUS 0 ERR ""
  OUT_HAS "{\"id\":\"q\",\"state\":\"explain\",\"placeable\":false,\"reason\":\"fragmented\",\"binding\":\"scattered\",\"message\":\"4 GPUs free, but the most in one NVLink domain is 2 (needs 4)"
          " 2 NVLink domains would hold it if their jobs ended\",\"unit\":\"gpus\",\"asked\":4,\"part\":4,\"parts\":1,\"total\":16,\"up\":16,\"free\":4,\"free_gpus\":4,\"closed_free_gpus\":0,\"largest_domain\":8,\"domains_needed\":1,\"idle_domains\":0,\"view\":{\"unit\":\"GPUs\",\"unit_gpus\":0,\"scope\":\"NVLink domain\",\"most_is\":\"the most\",\"need\":4,\"free\":4,\"most\":2,\"holding_now\":0,\"holding_if_emptied\":2,\"wholly_free\":0,\"scopes\":2}}\n{\"state\":\"stats\",\"allocatable_gpus\":[4,2,0,0,0,0,0,0],\"allocatable_nodes\":[0,0],\"held_gpus\":12,\"occupied_domains\":2,\"fewest_domains\":2}\n")

# contiguous-block counts sub-blocks, not GPUs.
topoblock_run(NAME "explain in the policy's units" ARGS place --topology grid:2:4:4 --policy contiguous-block
  INPUT "alloc a gpus=8\nalloc b gpus=8\nalloc c gpus=8\nalloc d gpus=8\nrelease a\nrelease c\nexplain q gpus=16\n"
  STATUS 0 ERR ""
  OUT_HAS "q EXPLAIN 2 8-GPU sub-blocks free, but the longest run in one NVLink domain is 1 (needs 2)")

topoblock_run(NAME "malformed questions" ARGS ${two_by_two}
  INPUT "explain\nexplain q gpus=two\nstats now\n"
  STATUS 1 OUT ""
  ERR "topoblock place: line 1, column 8: explain needs an ID
topoblock place: line 2, column 16: expected a positive number, got 'two'
topoblock place: line 3, column 7: unexpected 'now'
")
