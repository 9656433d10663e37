# `topoblock topology` end to end, and every topology source through place
# and simulate (io::load_topology). Run by CTest:
#   cmake -DTOPOBLOCK=<program> -DWORK=<dir> -P topology_sources.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Runs the program; fails unless it exits with `rc` and its stdout matches
# `pattern`. Sets _out and _err.
function(expect rc pattern)
  execute_process(COMMAND "${TOPOBLOCK}" ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE got
    INPUT_FILE "${WORK}/events")
  if(NOT got EQUAL rc OR NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "topoblock ${ARGN}: expected exit ${rc} and output matching '${pattern}', got ${got}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(_out "${out}" PARENT_SCOPE)
  set(_err "${err}" PARENT_SCOPE)
endfunction()
file(WRITE "${WORK}/events" "")

# The summary.
expect(0 "domains: 4 \\(4 of 18 nodes x 4 GPUs\\)\nnodes: 72\nGPUs: 288\nlevel 'group': 2 groups\n"
  topology --topology nvl72:4@2)

# spec -> topology.conf -> spec, and the same through topology.yaml.
foreach(_to conf yaml)
  expect(0 "rack04" topology --topology nvl72:4 --to ${_to})
  file(WRITE "${WORK}/cluster.${_to}" "${_out}")
  expect(0 "^nvl72:4\n$" topology --topology "${WORK}/cluster.${_to}" --to spec)
endforeach()
expect(0 "BlockName=rack01 Nodes=gb\\[01-18\\]" topology --topology nvl72:4 --to conf)
# A topology.conf with BlockSizes keeps them; its names have no spec.
file(WRITE "${WORK}/racks" "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n")
expect(0 "slurm-block: base block 4 nodes, 2 blocks, BlockSizes 4,8" topology --topology "${WORK}/racks")
expect(0 "block_sizes: \\[4, 8\\]" topology --topology "${WORK}/racks" --to yaml)
expect(1 "^$" topology --topology "${WORK}/racks" --to spec)
if(NOT _err MATCHES "domain 'b1' is named 'd01'")
  message(FATAL_ERROR "--to spec should say why no spec fits:\n${_err}")
endif()

# kubectl JSON: cliques, health on the map.
file(WRITE "${WORK}/nodes.json" [=[
{"apiVersion": "v1", "kind": "List", "items": [
  {"kind": "Node", "metadata": {"name": "gb-01", "labels": {"nvidia.com/gpu.clique": "c1.1"}},
   "status": {"capacity": {"nvidia.com/gpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}},
  {"kind": "Node", "metadata": {"name": "gb-02", "labels": {"nvidia.com/gpu.clique": "c1.1"}},
   "spec": {"unschedulable": true},
   "status": {"capacity": {"nvidia.com/gpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}},
  {"kind": "Node", "metadata": {"name": "gb-03", "labels": {"nvidia.com/gpu.clique": "c2.1"}},
   "status": {"capacity": {"nvidia.com/gpu": "4"}, "conditions": [{"type": "Ready", "status": "False"}]}},
  {"kind": "Node", "metadata": {"name": "cpu-01"}, "status": {"capacity": {"cpu": "64"}}}
]}
]=])
expect(0 "\\(kubectl JSON\\).*health: 1 up, 1 draining, 1 down.*c1\\.1 +gb-\\[01-02\\] +\\[\\.d\\]\nc2\\.1 +gb-03 +\\[x\\]"
  topology --topology "${WORK}/nodes.json" --map)

# place and simulate read every source too.
file(WRITE "${WORK}/events" "alloc j1 nodes=1\nalloc j2 nodes=1\n")
expect(0 "^j1 gb-01\nj2 PENDING" place --topology "${WORK}/nodes.json")
expect(0 "^j1 n[1-8]\nj2 n[1-8]\n$" place --topology "${WORK}/racks" --gpus-per-node 8)
file(WRITE "${WORK}/events" "")
expect(0 "slurm-block" simulate --topology "${WORK}/racks" --jobs 50 --svg - --policy slurm-block,best-fit)
expect(0 "best-fit" simulate --topology "${WORK}/nodes.json" --jobs 50 --svg - --policy best-fit)

# A snapshot's occupancy on the map and in a picture.
file(WRITE "${WORK}/events" "alloc a nodes=20\nalloc b gpus=2\ndown gb40\n")
expect(0 "" place --topology nvl72:3 --policy best-fit --save-state "${WORK}/state")
file(WRITE "${WORK}/events" "")
expect(0 "in use: 82 of 216 GPUs.*rack01 +gb\\[01-18\\] +\\[#+\\] +72/72 GPUs in use\nrack02 +gb\\[19-36\\] +\\[##\\+\\.+\\] +10/72.*rack03 .*\\[\\.\\.\\.x\\.+\\]"
  topology --topology nvl72:3 --state "${WORK}/state" --map --svg "${WORK}/map.svg")
file(READ "${WORK}/map.svg" _svg)
if(NOT _svg MATCHES "^<svg " OR NOT _svg MATCHES "gb40: down" OR NOT _svg MATCHES "gb21: up, 2/4 GPUs in use"
   OR NOT _svg MATCHES "</svg>\n$")
  message(FATAL_ERROR "unexpected rack map picture:\n${_svg}")
endif()

# Refusals: exit 2 and a message.
foreach(_bad "--topology;nvl72:2;--to;xml" "--to;conf" "--topology;${WORK}/missing" "--topology;nvl72:2;--state;${WORK}/state"
             "--topology;nvl72:2;--to;conf;--map" "--topology;${WORK}/racks;--nodes;n[1-3]" "--topology;nvl72:1;extra")
  execute_process(COMMAND "${TOPOBLOCK}" topology ${_bad} OUTPUT_QUIET ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 2 OR _err STREQUAL "")
    message(FATAL_ERROR "topology '${_bad}' should be refused with exit code 2 and a message; got ${_rc}")
  endif()
endforeach()
