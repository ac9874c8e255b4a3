#!/bin/bash
# Session 17, call 8: flag_probe (bench/data/session17/flag-probe/flag_probe.cu, built with nvcc -O2
# -arch=sm_90 into .device-variants/): how soon the host can know that a 2^10-query-sized grid is done.
for i in 1 2; do taskset -c 3 .device-variants/flag_probe; done 2>&1 | tee $OUT/flag_probe.txt
