# `topoblock place --json`: one JSON object a line for each answer
# (docs/place.md, "JSON answers").
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

set(eight "${WORK}/eight.conf")
file(WRITE "${eight}" "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n")

# Placed (whole nodes and a part of one), pending, refused, held, released,
# and an ID with quotes and backslashes, escaped.
topoblock_run(NAME "every kind of answer" ARGS place --topology "${eight}" --gpus-per-node 8 --json
  INPUT "alloc j1 nodes=2\nalloc \"q\\\\x gpus=3\nalloc j3 nodes=9\nhold h1 node[1-2]\nalloc j4 nodes=4\nalloc j5 nodes=5 segment=2\nrelease j1\n"
  STATUS 0 ERR ""
  OUT "{\"id\":\"j1\",\"state\":\"placed\",\"domains\":[\"b2\"],\"nodes\":[{\"node\":\"node5\",\"gpus\":[0,1,2,3,4,5,6,7]},{\"node\":\"node6\",\"gpus\":[0,1,2,3,4,5,6,7]}]}
{\"id\":\"\\\"q\\\\\\\\x\",\"state\":\"placed\",\"domains\":[\"b2\"],\"nodes\":[{\"node\":\"node7\",\"gpus\":[0,1,2]}]}
{\"id\":\"j3\",\"state\":\"refused\",\"reason\":\"exceeds_cluster\",\"message\":\"the request is larger than the whole cluster\"}
{\"id\":\"h1\",\"state\":\"held\",\"domains\":[\"b1\"],\"nodes\":[{\"node\":\"node1\",\"gpus\":[0,1,2,3,4,5,6,7]},{\"node\":\"node2\",\"gpus\":[0,1,2,3,4,5,6,7]}]}
{\"id\":\"j4\",\"state\":\"pending\",\"reason\":\"insufficient_free\",\"message\":\"not enough free GPUs now\"}
{\"id\":\"j5\",\"state\":\"refused\",\"reason\":\"invalid_request\",\"message\":\"the request is malformed (zero size, or a segment size that does not divide it)\"}
{\"id\":\"j1\",\"state\":\"released\"}
")

# Lines that cannot be applied: an error object on stdout (with the errc of
# a refusal), the message on stderr, exit status 1. Control bytes in a
# message are escaped; an ID that is not UTF-8 is refused, one that is
# passes unchanged.
string(ASCII 27 esc)
string(ASCII 255 ff)
topoblock_run(NAME "errors" ARGS place --topology "${eight}" --json
  INPUT "alloc a nodes=two\nrelease zz\nhold h node[1-2]\nhold g node2\nalloc ${esc}x nodes=1\nalloc b${ff} nodes=1\nalloc é nodes=1\n"
  STATUS 1
  OUT "{\"line\":1,\"column\":15,\"state\":\"error\",\"message\":\"expected a positive number, got 'two'\"}
{\"line\":2,\"column\":9,\"state\":\"error\",\"reason\":\"unknown_allocation\",\"message\":\"no running allocation 'zz'\"}
{\"id\":\"h\",\"state\":\"held\",\"domains\":[\"b1\"],\"nodes\":[{\"node\":\"node1\",\"gpus\":[0,1,2,3]},{\"node\":\"node2\",\"gpus\":[0,1,2,3]}]}
{\"line\":4,\"column\":8,\"state\":\"error\",\"reason\":\"not_free\",\"message\":\"node 'node2' is not free\"}
{\"id\":\"\\u001bx\",\"state\":\"placed\",\"domains\":[\"b1\"],\"nodes\":[{\"node\":\"node3\",\"gpus\":[0,1,2,3]}]}
{\"line\":6,\"column\":7,\"state\":\"error\",\"message\":\"ID 'b\\\\xff' is not UTF-8, which JSON cannot carry\"}
{\"id\":\"é\",\"state\":\"placed\",\"domains\":[\"b1\"],\"nodes\":[{\"node\":\"node4\",\"gpus\":[0,1,2,3]}]}
"
  ERR "topoblock place: line 1, column 15: expected a positive number, got 'two'
topoblock place: line 2, column 9: no running allocation 'zz'
topoblock place: line 4, column 8: node 'node2' is not free
topoblock place: line 6, column 7: ID 'b\\xff' is not UTF-8, which JSON cannot carry
")
# Without --json the same ID is taken: text carries any bytes.
topoblock_run(NAME "text mode takes any ID" ARGS place --topology "${eight}" INPUT "alloc b${ff} nodes=1\n" STATUS 0 OUT "b${ff} node1\n")
