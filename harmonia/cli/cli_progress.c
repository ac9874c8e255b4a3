/* cli_progress.c — draws and clears the progress bar of long steps on a terminal (stderr only).
 * What counts as progress is decided by the callers and the library's progress callbacks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_progress.h"

#define BAR_WIDTH 30

void cli_progress_init(cli_progress *progress, bool quiet)
{
    memset(progress, 0, sizeof *progress);
    progress->enabled = !quiet && isatty(STDERR_FILENO);
    progress->permille = -1;
}

void cli_progress_update(cli_progress *progress, const char *phase, double fraction)
{
    if (progress == NULL || !progress->enabled)
        return;
    if (!(fraction >= 0.0))
        fraction = 0.0;
    if (fraction > 1.0)
        fraction = 1.0;
    int permille = (int)(fraction * 1000.0);
    bool same_phase = strncmp(progress->phase, phase, sizeof progress->phase - 1) == 0;
    if (same_phase && permille / 10 == progress->permille / 10)
        return;
    double now = cli_now();
    if (same_phase && permille < 1000 && now - progress->last_draw < 0.1)
        return;
    snprintf(progress->phase, sizeof progress->phase, "%s", phase);
    progress->permille = permille;
    progress->last_draw = now;
    char bar[BAR_WIDTH + 1];
    int filled = permille * BAR_WIDTH / 1000;
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r\033[K%-16s [%s] %3d%%", progress->phase, bar, permille / 10);
    fflush(stderr);
    progress->drawn = true;
}

void cli_progress_callback(void *arg, const char *phase, double fraction)
{
    cli_progress_update((cli_progress *)arg, phase != NULL ? phase : "", fraction);
}

void cli_progress_done(cli_progress *progress)
{
    if (progress == NULL || !progress->drawn)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    progress->drawn = false;
    progress->phase[0] = '\0';
    progress->permille = -1;
}
