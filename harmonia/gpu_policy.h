/* gpu_policy.h — the tuning numbers of the front's GPU pipelines (gpu_tree.cu, gpu_query.cu), apart
 * from their logic, as psa/psa_policy.h and ntg/ntg_policy.h are for the kernels: how many windows
 * are in flight, how host-array range collects are cut, how an incremental sync groups its copies.
 * Measured on sm_90 (bench/NOTES.md); nothing here changes a result. */
#ifndef HARMONIA_GPU_POLICY_H
#define HARMONIA_GPU_POLICY_H

/* Pipeline lanes: windows in flight at once (each lane has a stream and one window's buffers), the
 * most a query config's pipeline_depth may ask. */
#define HM_LANES 3

/* Synchronous device-array lookups and lower bounds that run as one launch (no partition) wait for
 * a completion signal (ntg_signal, ntg.h: the kernel's last block writes a word of host memory)
 * rather than for their stream: measured on the H200 (bench/NOTES.md, "Session 28", the sync
 * probe), 0.6-1 us sooner a call of 12-14 us. The wait spins, as the runtime's own does on a device
 * that spins (the default), checking the stream every HM_SIGNAL_CHECK_US microseconds so that a
 * failed launch is caught; a device set to block or yield while waiting
 * (cudaDeviceScheduleBlockingSync, cudaDeviceScheduleYield) waits for the stream. HM_SIGNALS 0
 * turns the signals off (the #ifndef lets an A/B build do that). Nothing here changes a result. */
#ifndef HM_SIGNALS
#define HM_SIGNALS 1
#endif
#define HM_SIGNAL_CHECK_US 20
/* ... for calls of at most HM_SIGNAL_MAX_BATCH queries: a launch of many blocks pays for the
 * signal in every block's last steps (a barrier, a fence, an atomic add: with a fence in every
 * thread, 2^18- and 2^20-query calls ran 12-20 % slower on the H200, bench/NOTES.md, "Session 28",
 * call 2), and saves a microsecond only where the call is a few microseconds long. */
#ifndef HM_SIGNAL_MAX_BATCH
#define HM_SIGNAL_MAX_BATCH (1u << 16)
#endif
/* Words between two slots' signal words (a cache line: the host threads spinning on them share none). */
#define HM_SIGNAL_STRIDE 16

/* Host-array range collects: a chunk holds at most HM_COLLECT_MAX_PAIRS pairs, and long ranges are
 * cut into pieces of at most HM_COLLECT_PIECE_PAIRS pairs, each copied by its own warp. */
#define HM_COLLECT_MAX_PAIRS (1u << 24)
#define HM_COLLECT_PIECE_PAIRS 4096u

/* The incremental sync after an update copies runs of dirty leaves, bridging gaps of up to
 * HM_SYNC_GAP clean leaves (copied unchanged); with more than HM_SYNC_MAX_RUNS runs, one span from
 * the first to the last dirty leaf. */
#define HM_SYNC_GAP 64u
#define HM_SYNC_MAX_RUNS 1024u

/* Dirty leaves that are at most 1 / HM_SYNC_GATHER_RATIO of the leaves those copies would send
 * (the runs with their bridged gaps, or the span) are gathered into the pinned staging with their
 * indices, sent in one DMA a chunk and scattered by a kernel (gpu_scatter.cu) instead: a thin
 * spread (a delete-only 2^16 batch: 65K of 4.2M leaves) sends 17 MB, not 1.1 GB. Denser sets keep
 * the copies (gathering copies on the host what they send through the staging). The kernel: HM_SCATTER_BLOCK threads a
 * block, at most HM_SCATTER_MAX_BLOCKS blocks (grid-stride), one 16-byte word a thread. */
#define HM_SYNC_GATHER_RATIO 2u
#define HM_SCATTER_BLOCK 256u
#define HM_SCATTER_MAX_BLOCKS 2048u

/* Host-to-pinned copies run on OpenMP threads from KR_PARALLEL_COPY_MIN bytes on (kr_parallel_copy,
 * key_region.h). */

/* Uploads of a tree (the device copy, a re-upload after an update): host arrays that are not
 * pinned go through HM_UPLOAD_BUFFERS pinned buffers of HM_UPLOAD_CHUNK bytes, filled by OpenMP
 * threads while the DMA of the previous chunk runs (a pageable cudaMemcpy moved 1.14 GB in
 * 0.16-0.20 s on the H100 machine, 6-7 GB/s; pinned copies run at 54 GB/s: bench/NOTES.md). Arrays
 * below HM_UPLOAD_STAGED_MIN bytes are copied directly. */
#define HM_UPLOAD_BUFFERS 3
#define HM_UPLOAD_CHUNK (32u << 20)
#define HM_UPLOAD_STAGED_MIN (16u << 20)

/* The GPU bulk build (gpu_build.cu). Under backend AUTO, host inputs of fewer than
 * HM_GPU_BUILD_MIN_PAIRS pairs build on the CPU: below it the GPU's fixed costs (about 0.3 s in a
 * fresh process: the CUDA context, the pinned staging, the device copy's setup) exceed what it
 * saves. Measured on the H100 machine (bench/NOTES.md, issue 15): `harmonia build` of 2^16 … 2^24
 * pairs took 0.3-0.48 s on the GPU against 0.002-0.10 s on 16 CPU threads; 2^26 pairs 0.27-0.42 s
 * on the CPU; 2^28 pairs 0.86 s on the GPU against 4.5 s. Host arrays move through
 * HM_BUILD_STAGING_BUFFERS pinned buffers of HM_BUILD_STAGING_CHUNK bytes: the copy of one chunk
 * into (or out of) pinned memory on the OpenMP threads overlaps the DMA of the others. */
#define HM_GPU_BUILD_MIN_PAIRS (1u << 26)
#define HM_BUILD_STAGING_CHUNK (32u << 20)
#define HM_BUILD_STAGING_BUFFERS 4

#endif /* HARMONIA_GPU_POLICY_H */
