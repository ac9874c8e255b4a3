/* cli_progress.h — the progress bar of the harmonia tool: drawn on stderr, and only when stderr
 * is a terminal, so that pipes, files and tests see nothing of it. It does not time or log. */
#ifndef HARMONIA_CLI_PROGRESS_H
#define HARMONIA_CLI_PROGRESS_H

#include <stdbool.h>

typedef struct cli_progress {
    bool enabled;       /* stderr is a terminal and the user did not ask for quiet */
    bool drawn;         /* a bar is on the screen (to clear) */
    char phase[48];     /* the phase last drawn */
    int permille;       /* the fraction last drawn, in 1/1000 */
    double last_draw;   /* cli_now() of the last draw */
} cli_progress;

void cli_progress_init(cli_progress *progress, bool quiet);

/* Draws "phase [#####.....]  42%" when the phase or the percentage changed, at most ~10 times a
 * second. fraction is clamped to [0, 1]. */
void cli_progress_update(cli_progress *progress, const char *phase, double fraction);

/* The same as a harmonia_progress_fn: arg is a cli_progress. */
void cli_progress_callback(void *arg, const char *phase, double fraction);

/* Clears the bar from the screen (call before printing results or errors). */
void cli_progress_done(cli_progress *progress);

#endif /* HARMONIA_CLI_PROGRESS_H */
