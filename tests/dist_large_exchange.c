/* dist_large_exchange.c — a check of dist/'s exchange above MPI's int limits, run by hand (it needs
 * ~6 GiB per rank, too much for CI): every rank sends 2^27 + 5 64-bit words to every other rank and
 * 2^27 to itself (over 2^31 bytes per rank, messages over 1 GiB, so the rounds path), and checks
 * every word it receives. Run: tests/mpi_run.sh 2 build/tests/dist_large_exchange [log2 words]. */
#include <stdio.h>
#include <stdlib.h>

#include "dist/dist_internal.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dst_ctx ctx = {MPI_COMM_WORLD, 0, 0, 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.ranks);
    const int log2_words = argc > 1 ? atoi(argv[1]) : 27;
    const uint64_t base = (uint64_t)1 << log2_words;
    dst_plan plan;
    if (!dst_plan_init(&plan, ctx.ranks))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < ctx.ranks; r++)
        plan.send_counts[r] = base + (r != ctx.rank ? 5 : 0);
    dst_plan_counts(&ctx, &plan);
    uint64_t *send = malloc(plan.send_total * 8), *recv = malloc(plan.recv_total * 8);
    dst_err err;
    dst_err_clear(&err);
    if (send == NULL || recv == NULL)
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory");
    for (uint64_t i = 0; send != NULL && i < plan.send_total; i++)
        send[i] = ((uint64_t)ctx.rank << 40) + i;
    if (dst_plan_agree(&ctx, &plan, &err) != HARMONIA_OK) {
        if (ctx.rank == 0)
            fprintf(stderr, "%s\n", err.message);
        MPI_Finalize();
        return 1;
    }
    double t = MPI_Wtime();
    harmonia_status status = dst_exchange(&ctx, &plan, false, send, recv, 8, NULL, &err);
    t = MPI_Wtime() - t;
    uint64_t wrong = 0;
    for (int r = 0; status == HARMONIA_OK && r < ctx.ranks; r++) {
        uint64_t first = 0; /* where rank r's words for me start in its send buffer */
        for (int q = 0; q < ctx.rank; q++)
            first += base + (q != r ? 5 : 0);
        for (uint64_t i = 0; i < plan.recv_counts[r]; i++)
            wrong += recv[plan.recv_offsets[r] + i] != ((uint64_t)r << 40) + first + i;
    }
    printf("rank %d: %s, received %llu words (%.2f GiB) in %.2f s, %llu wrong\n", ctx.rank,
           harmonia_strerror(status), (unsigned long long)plan.recv_total,
           (double)plan.recv_total * 8.0 / (1u << 30), t, (unsigned long long)wrong);
    free(send);
    free(recv);
    dst_plan_free(&plan);
    MPI_Finalize();
    return status == HARMONIA_OK && wrong == 0 ? 0 : 1;
}
