# `topoblock place` end to end: options, topology files, events in, the
# decisions and errors out (docs/place.md).
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

set(eight "${WORK}/eight.conf")
file(WRITE "${eight}" "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n")

topoblock_run(NAME "Slurm's examples from a topology.conf" ARGS place --topology "${eight}"
  INPUT "# 2, 3, 3 nodes\nalloc j1 nodes=2\nalloc j2 nodes=3\nalloc j3 nodes=3\nrelease j1\nrelease j2\nalloc j4 nodes=3\nalloc j5 nodes=5\nrelease j4\nrelease j5\nalloc j6 nodes=4 segment=2\nalloc j7 nodes=5 segment=2\n"
  STATUS 0 ERR ""
  OUT "j1 node[5-6]\nj2 node[1-3]\nj3 PENDING fragmented\nj4 node[5-7]\nj5 node[1-4,8]\nj6 node[5-8]\nj7 PENDING invalid_request\n")

file(WRITE "${WORK}/nodes.txt"
  "NAME    STATUS                     ROLES    AGE   VERSION   LABELS\n"
  "gb-01   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
  "gb-02   Ready,SchedulingDisabled   <none>   9d    v1.31.2   nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
  "gb-03   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
  "gb-04   NotReady                   <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
  "gb-05   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
  "cpu-01  Ready                      <none>   9d    v1.31.2   kubernetes.io/os=linux\n")
# Cordoned and NotReady nodes kept out: one usable node left for j2.
topoblock_run(NAME "a kubectl node listing" ARGS place --topology "${WORK}/nodes.txt" --policy best-fit
  INPUT "alloc j1 nodes=2\nalloc j2 nodes=2\nalloc j3 gpus=4\nup gb-02\nalloc j4 gpus=4\n"
  STATUS 0 ERR "" OUT "j1 gb-[03,05]\nj2 PENDING insufficient_free\nj3 gb-01\nj4 gb-02\n")
file(WRITE "${WORK}/bad_nodes.txt" "NAME STATUS LABELS\ngb-01 Ready nvidia.com/gpu.count=x\n")
topoblock_run(NAME "a bad label names the file and line" ARGS place --topology "${WORK}/bad_nodes.txt" STATUS 2
  ERR_HAS "${WORK}/bad_nodes.txt, line 2, column 34: node 'gb-01': nvidia.com/gpu.count 'x' is not a GPU count")

file(WRITE "${WORK}/racks.txt"
  "- topology: racks\n  cluster_default: true\n  block:\n    block_sizes: [18]\n    blocks:\n"
  "      - block: r1\n        nodes: n[01-18]\n      - block: r2\n        nodes: n[19-36]\n"
  "      - block: r3\n        nodes: n[37-54]\n      - block: r4\n        nodes: n[55-72]\n")
topoblock_run(NAME "a topology.yaml, detected by content" ARGS place "--topology=${WORK}/racks.txt"
  INPUT "alloc a nodes=4\nalloc b nodes=8\nalloc c nodes=18\nalloc d nodes=6\nalloc e nodes=12\n"
  STATUS 0 OUT "a n[55-58]\nb n[59-66]\nc n[37-54]\nd n[67-72]\ne n[19-30]\n")

# g1: b2 has one free node, the tighter block. g2: two whole nodes' worth,
# 8 + 4 GPUs.
topoblock_run(NAME "holds, health events and GPU-level jobs" ARGS place --topology "${eight}" --gpus-per-node 8
  INPUT "hold running node[6-8]\nalloc g1 gpus=3\nalloc g2 gpus=12\ndown node1\nalloc n1 nodes=2 exclusive=topo\nup node1\nrelease running\ndrain node[5-6]\nalloc n2 nodes=2\n"
  STATUS 0 ERR "" OUT "g1 node5 node5:0-2\ng2 node[1-2] node2:0-3\nn1 PENDING fragmented\nn2 node[7-8]\n")

topoblock_run(NAME "another policy on a preset" ARGS place --topology nvl72:2 --policy best-fit
  INPUT "alloc a gpus=2\nalloc b nodes=18\n" STATUS 0 OUT "a gb01 gb01:0-1\nb gb[19-36]\n")
# slurm-block on a preset: each rack a base block. A one-node job takes the
# first free node from Slurm 26.05 (the default); 25.11's block rules pick
# the later of two tied racks.
topoblock_run(NAME "slurm-block on a preset" ARGS place --topology nvl72:2 INPUT "alloc a nodes=1\n" STATUS 0 OUT "a gb01\n")
topoblock_run(NAME "slurm-block on a preset as Slurm 25.11" ARGS place --topology nvl72:2 --slurm-version 25.11
  INPUT "alloc a nodes=1\n" STATUS 0 OUT "a gb19\n")
# Blocks node[1-4] and node[5-8], BlockSizes=4,8, an empty cluster: the
# first one-node job goes to node1 from 26.05, to node5 up to 25.11.
topoblock_run(NAME "one-node jobs under Slurm 26.05" ARGS place --topology "${eight}" --slurm-version=26.05
  INPUT "alloc a nodes=1\nalloc b nodes=1\n" STATUS 0 ERR "" OUT "a node1\nb node2\n")
topoblock_run(NAME "one-node jobs under Slurm 25.11" ARGS place --topology "${eight}" --slurm-version 25.11
  INPUT "alloc a nodes=1\nalloc b nodes=1\n" STATUS 0 ERR "" OUT "a node5\nb node6\n")
topoblock_run(NAME "an unknown Slurm version" ARGS place --topology "${eight}" --slurm-version 24.05 STATUS 2
  ERR_HAS "topoblock place: --slurm-version takes one of 25.11, 26.05, got '24.05'")
topoblock_run(NAME "--slurm-version with another policy" ARGS place --topology "${eight}" --policy best-fit --slurm-version 25.11
  STATUS 2 ERR_HAS "topoblock place: --slurm-version applies to slurm-block, not to --policy 'best-fit'")
topoblock_run(NAME "whole-nodes and locality words" ARGS place --topology nvl72:2 --policy best-fit
  INPUT "alloc a gpus=2 whole-nodes\nalloc b gpus=80 locality=prefer\nalloc c gpus=80\n" STATUS 0
  OUT "a gb01\nb gb[02-03,19-36]\nc PENDING insufficient_free\n")

topoblock_run(NAME "a hostlist names at most the topology's nodes, refused before the names are made" ARGS place --topology "${eight}"
  INPUT "drain node[1-8]\nup node[1-8]\ndown node[0-99999999]\n" STATUS 1
  ERR "topoblock place: line 3, column 6: hostlist expands to more than 8 names\n")

topoblock_run(NAME "malformed lines are reported with their line and change nothing" ARGS place --topology "${eight}"
  INPUT "alloc a nodes=2\nalloc a nodes=1\nalloc b nodes=two\nalloc c\nalloc d nodes=1 colour=red\nhold e node[7-9]\nhold e node5\nrelease zz\nreboot node1\ndown node[3-\n   # only a comment\nalloc f nodes=2\nalloc g nodes\nalloc h gpus=4294967296\nalloc i gpus=2 gpus=2\n"
  STATUS 1 OUT "a node[5-6]\nf node[7-8]\n"
  ERR "topoblock place: line 2, column 7: allocation 'a' is already running
topoblock place: line 3, column 15: expected a positive number, got 'two'
topoblock place: line 4, column 8: the request needs nodes=N or gpus=N
topoblock place: line 5, column 17: unknown request word 'colour=red' (expected nodes=, gpus=, segment=, spread-segments, exclusive=topo, whole-nodes, locality=)
topoblock place: line 6, column 8: unknown node 'node9'
topoblock place: line 7, column 8: node 'node5' is not free
topoblock place: line 8, column 9: no running allocation 'zz'
topoblock place: line 9, column 1: unknown event 'reboot' (expected alloc, hold, release, down, drain, up, save, explain, stats, advise or protect)
topoblock place: line 10, column 10: unbalanced bracket: '[' is never closed
topoblock place: line 13, column 9: 'nodes' needs a value: nodes=...
topoblock place: line 14, column 14: '4294967296' is too large (at most 4294967295)
topoblock place: line 15, column 16: give one of nodes= and gpus=, once
")

# Command-line errors: exit status 2, nothing read.
topoblock_run(NAME "no arguments" ARGS place STATUS 2 ERR_HAS "--topology is required")
topoblock_run(NAME "unknown policy" ARGS place --topology nvl72:1 --policy random STATUS 2 ERR_HAS "unknown policy 'random'")
topoblock_run(NAME "missing file" ARGS place --topology /no/such/file STATUS 2 ERR_HAS "'/no/such/file' is neither a readable file nor a topology spec")
# A directory opens as a stream but throws when read: named, not thrown.
topoblock_run(NAME "a directory as topology" ARGS place --topology "${WORK}" INPUT "alloc j nodes=1\n" STATUS 2 OUT ""
  ERR_HAS "topoblock place: --topology: '" "' is not a regular file")  # (a long path is quoted short)
foreach(bad 0 65 -1 nan inf 4x 4294967296 "")
  # (--flag=value: CMake drops an empty word from a list.)
  topoblock_run(NAME "--gpus-per-node ${bad}" ARGS place --topology "${eight}" "--gpus-per-node=${bad}" STATUS 2
    ERR_HAS "topoblock place: --gpus-per-node takes a whole number from 1 to 64, got '${bad}'")
endforeach()
topoblock_run(NAME "--gpus-per-node too large" ARGS place --topology "${eight}" --gpus-per-node 65 STATUS 2
  ERR_HAS "got '65', which is too large\n")
topoblock_run(NAME "--gpus-per-node=64" ARGS place --topology "${eight}" --gpus-per-node=64 STATUS 0)
topoblock_run(NAME "--help" ARGS place --help STATUS 0 OUT_HAS "alloc ID nodes=N" "--json")
file(WRITE "${WORK}/tree.conf" "SwitchName=s1 Nodes=n[1-2]\n")
topoblock_run(NAME "a tree topology" ARGS place --topology "${WORK}/tree.conf" STATUS 2 ERR_HAS "needs a block topology")
# Whatever the policy: the file is what is wrong, not slurm-block.
topoblock_run(NAME "a tree topology, best-fit" ARGS place --topology "${WORK}/tree.conf" --policy best-fit STATUS 2
  ERR_LACKS "slurm-block")
topoblock_run(NAME "a stray word" ARGS place --topology "${eight}" extra STATUS 2 ERR_HAS "unexpected argument 'extra'")
# Issue 38: unknown options named as such wherever they stand, options
# that do not apply refused.
topoblock_run(NAME "unknown option last" ARGS place --topology nvl72:1 --frob STATUS 2 ERR_HAS "unknown option '--frob'")
topoblock_run(NAME "unknown option with a value" ARGS place --frob=1 --topology nvl72:1 STATUS 2 ERR_HAS "unknown option '--frob'")
topoblock_run(NAME "--json takes no value" ARGS place --topology nvl72:1 --json=yes STATUS 2 ERR_HAS "--json takes no value")
topoblock_run(NAME "--nodes with a preset" ARGS place --topology nvl72:2 --nodes "gb[01-72]" STATUS 2
  ERR_HAS "--nodes applies to Slurm topology files, not to the preset 'nvl72:2'")
topoblock_run(NAME "--gpus-per-node with a preset" ARGS place --topology nvl72:2 --gpus-per-node 8 STATUS 2
  ERR_HAS "--gpus-per-node applies to Slurm topology files and kubectl listings, not to the preset 'nvl72:2'")
topoblock_run(NAME "--nodes with a kubectl listing" ARGS place --topology "${WORK}/nodes.txt" --nodes "gb-0[1-5]" STATUS 2
  ERR_HAS "--nodes applies to Slurm files, not to a kubectl listing")
# A missing file with --nodes is named as missing, not as a preset.
topoblock_run(NAME "--nodes with a missing file" ARGS place --topology /no/such/file --nodes "n[1-2]" STATUS 2
  ERR_HAS "'/no/such/file' is neither a readable file nor a topology spec" ERR_LACKS "preset")
file(WRITE "${WORK}/two.spec" "nvl72:2\n")
topoblock_run(NAME "--nodes with a spec file" ARGS place --topology "${WORK}/two.spec" --nodes "n[1-2]" STATUS 2
  ERR_HAS "--nodes applies to Slurm files, not to a spec file")

# Echoed words are cut to a few dozen bytes and escaped (a 1 MB word shows
# what the review's 100 MB one did).
string(REPEAT "x" 1000000 huge)
string(REPEAT "x" 32 cut32)
string(REPEAT "x" 30 cut30)
set(cut "'${cut32}...'")
string(ASCII 27 esc)
string(ASCII 7 bel)
topoblock_run(NAME "huge words and control bytes" ARGS place --topology "${eight}"
  INPUT "${huge}\nalloc a nodes=1 ${huge}\nrelease ${huge}\nalloc b nodes=1${esc}[2J\ndown node${bel}[1-2]\ndown node[1-${huge}]\nhold c node1 ${esc}]0${bel}\n"
  STATUS 1 OUT ""
  ERR "topoblock place: line 1, column 1: unknown event ${cut} (expected alloc, hold, release, down, drain, up, save, explain, stats, advise or protect)
topoblock place: line 2, column 17: unknown request word ${cut} (expected nodes=, gpus=, segment=, spread-segments, exclusive=topo, whole-nodes, locality=)
topoblock place: line 3, column 9: no running allocation ${cut}
topoblock place: line 4, column 15: expected a positive number, got '1\\x1b[2J'
topoblock place: line 5, column 6: unknown node 'node\\x071'
topoblock place: line 6, column 13: range '1-${cut30}...' is not numeric
topoblock place: line 7, column 14: unexpected '\\x1b]0\\x07'
")
# (A command-line word is at most 128 KiB on Linux.)
string(REPEAT "x" 100000 long)
topoblock_run(NAME "a huge control-laden option" ARGS place --topology "${eight}" "--frob${esc}[2J${long}" v STATUS 2
  ERR_HAS "topoblock place: unknown option '--frob\\x1b[2Jxxxx" ERR_LACKS "${esc}")
string(LENGTH "${_err}" _n)
if(_n GREATER 2000)
  message(FATAL_ERROR "the unknown option's message is ${_n} bytes")
endif()
topoblock_run(NAME "a policy with an escape" ARGS place --topology nvl72:1 --policy "${esc}[31mred" STATUS 2
  ERR_HAS "unknown policy '\\x1b[31mred'")
topoblock_run(NAME "a huge preset" ARGS place --topology "nvl72:${long}" STATUS 2)
string(LENGTH "${_err}" _n)
if(_n GREATER 1000)
  message(FATAL_ERROR "the huge preset's message is ${_n} bytes")
endif()

# Snapshots: refused before any event when they do not fit.
set(state "${WORK}/state.snapshot")
topoblock_run(NAME "save a state" ARGS place --topology "${eight}" --save-state "${state}" INPUT "alloc j1 nodes=2\n" STATUS 0)
topoblock_run(NAME "a snapshot of another topology" ARGS place --topology nvl72:1 --load-state "${state}"
  INPUT "release j1\n" STATUS 2 OUT "" ERR_HAS "another topology" "${state}, line 2")
topoblock_run(NAME "a snapshot of another policy" ARGS place --topology "${eight}" --policy best-fit --load-state "${state}"
  STATUS 2 ERR_HAS "saved under policy slurm-block, not best-fit")
topoblock_run(NAME "no snapshot" ARGS place --topology "${eight}" --load-state /no/such/snapshot STATUS 2)
file(WRITE "${WORK}/damaged.snapshot" "topoblock-snapshot 1\n")
topoblock_run(NAME "a damaged snapshot" ARGS place --topology "${eight}" --load-state "${WORK}/damaged.snapshot" STATUS 2
  ERR_HAS "truncated")
# The running IDs come back: j1 is released, and a new j1 may start (on the
# first free node from Slurm 26.05; up to 25.11 by the block rules, whatever
# version the snapshot was saved under: the version is a setting).
topoblock_run(NAME "running IDs come back" ARGS place --topology "${eight}" --load-state "${state}"
  INPUT "alloc j1 nodes=1\nrelease j1\nalloc j1 nodes=1\n" STATUS 1 OUT "j1 node1\n"
  ERR "topoblock place: line 1, column 7: allocation 'j1' is already running\n")
topoblock_run(NAME "running IDs come back under Slurm 25.11" ARGS place --topology "${eight}" --load-state "${state}"
  --slurm-version 25.11 INPUT "release j1\nalloc j1 nodes=1\n" STATUS 0 ERR "" OUT "j1 node5\n")
topoblock_run(NAME "a save event that cannot be written" ARGS place --topology "${eight}"
  INPUT "alloc j1 nodes=1\nsave\nsave /no/such/dir/state\nsave a b\n" STATUS 1 OUT "j1 node1\n"
  ERR "topoblock place: line 2, column 5: save needs a FILE
topoblock place: line 3, column 6: cannot write '/no/such/dir/state.tmp'
topoblock place: line 4, column 8: unexpected 'b'
")
topoblock_run(NAME "--save-state that cannot be written" ARGS place --topology "${eight}" --save-state /no/such/dir/state
  INPUT "alloc j1 nodes=1\n" STATUS 1 OUT "j1 node1\n" ERR_HAS "--save-state")
