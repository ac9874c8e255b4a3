#!/bin/bash
# Session 13, call 1: each level's children from its closed form (no first-child reads on the
# device). The new binaries' test programs (tests.list), then bench_versus --only sizes,batch with
# the old (945b5a6) and new binaries, alternating, three rounds each; one table at the end.
exec bash bench/data/session13/ab.sh 945b5a6 sizes,batch 100
