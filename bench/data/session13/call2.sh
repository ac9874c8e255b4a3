#!/bin/bash
# Session 13, call 2: the closed form in three words (base, share, extra_end: the G = 1 and 2
# kernels back to 32 registers), tests.list, then bench_versus --only sizes,batch,ranges with the
# old (945b5a6) and new binaries, alternating, three rounds each; one table at the end.
exec bash bench/data/session13/ab.sh 945b5a6 sizes,batch,ranges 130
