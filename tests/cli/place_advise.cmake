# `topoblock place`: the advise and protect events (docs/place.md). Each
# advised set is released, exactly, and the request then placed.
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

# Two racks of 2 nodes x 4 GPUs: a holds 6 GPUs of rack 1, c one more, b 4
# of rack 2.
set(three "alloc a gpus=6\nalloc b gpus=4\nalloc c gpus=1\n")
topoblock_run(NAME "advise: none, the cheapest set, protected ones left, impossible"
  ARGS place --topology grid:2:2:4 --policy best-fit
  INPUT "${three}advise q0 gpus=2\nadvise q1 gpus=8\nprotect b\nadvise q2 gpus=8\nprotect a\nadvise q3 gpus=8\nadvise q4 gpus=17\n"
  STATUS 0 ERR ""
  OUT "a n[01-02] n02:0-1\nb n03\nc n02 n02:2\nq0 ADVISE none\nq1 ADVISE b\nq2 ADVISE a,c\nq3 ADVISE impossible insufficient_free\nq4 ADVISE impossible exceeds_cluster\n")

topoblock_run(NAME "advise: releasing the advised set places the request"
  ARGS place --topology grid:2:2:4 --policy best-fit
  INPUT "${three}advise q1 gpus=8\nrelease b\nalloc q1 gpus=8\n"
  STATUS 0 ERR ""
  OUT "a n[01-02] n02:0-1\nb n03\nc n02 n02:2\nq1 ADVISE b\nq1 n[03-04]\n")

# Protected, a and c stay: b goes although a alone would do as well.
topoblock_run(NAME "advise: two stops, released, then placed"
  ARGS place --topology grid:2:2:4 --policy best-fit
  INPUT "${three}protect b\nadvise q gpus=8\nrelease a\nrelease c\nalloc q gpus=8\n"
  STATUS 0 ERR ""
  OUT "a n[01-02] n02:0-1\nb n03\nc n02 n02:2\nq ADVISE a,c\nq n[01-02]\n")

# contiguous-block, 8-GPU sub-blocks of two nodes: a (6 GPUs) and b each
# hold a whole sub-block; equal costs go to the lower allocation id.
topoblock_run(NAME "advise under contiguous-block"
  ARGS place --topology grid:2:2:4 --policy contiguous-block
  INPUT "alloc a gpus=6\nalloc b gpus=8\nadvise q nodes=2\nrelease a\nalloc q nodes=2\n"
  STATUS 0 ERR ""
  OUT "a n[01-02]\nb n[03-04]\nq ADVISE a\nq n[01-02]\n")

topoblock_run(NAME "advise and protect in JSON"
  ARGS place --topology grid:2:2:4 --policy best-fit --json
  INPUT "${three}advise q0 gpus=2\nadvise q1 gpus=8\nprotect b\nprotect a\nadvise q3 gpus=8\n"
  STATUS 0 ERR ""
  OUT_HAS "{\"id\":\"q0\",\"state\":\"advice\",\"advice\":\"none\"}
{\"id\":\"q1\",\"state\":\"advice\",\"advice\":\"stop\",\"stop\":[\"b\"],\"gpus\":4,\"exact\":true}
{\"id\":\"b\",\"state\":\"protected\"}
{\"id\":\"a\",\"state\":\"protected\"}
{\"id\":\"q3\",\"state\":\"advice\",\"advice\":\"impossible\",\"reason\":\"insufficient_free\",\"message\":\"not enough free GPUs now\"}
")

topoblock_run(NAME "protect and advise errors"
  ARGS place --topology grid:2:2:4
  INPUT "protect zz\nprotect\nalloc a gpus=1\nprotect a b\nadvise\nadvise q gpus=x\n"
  STATUS 1 OUT "a n03 n03:0\n"
  ERR "topoblock place: line 1, column 9: no running allocation 'zz'
topoblock place: line 2, column 8: protect needs an ID
topoblock place: line 4, column 11: unexpected 'b'
topoblock place: line 5, column 7: advise needs an ID
topoblock place: line 6, column 15: expected a positive number, got 'x'
")
