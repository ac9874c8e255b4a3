#!/bin/bash
# Session 13, call 3: a PSA call's windows on the caller's stream (no fork to lane 0 and join back),
# tests.list, then bench_versus --only sizes,batch with the previous (0725e5b, the closed form) and
# new binaries, alternating, three rounds each; one table at the end.
exec bash bench/data/session13/ab.sh 0725e5b sizes,batch 130
