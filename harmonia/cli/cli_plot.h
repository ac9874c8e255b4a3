/* cli_plot.h — line charts written directly as SVG (no plotting program needed at run time): one
 * row of x labels, a series on a left axis and optionally one on a right axis, each with one marked
 * point. Used by `harmonia profile-ntg --plot`. It knows nothing of trees. */
#ifndef HARMONIA_CLI_PLOT_H
#define HARMONIA_CLI_PLOT_H

#include <stddef.h>

typedef struct cli_plot_series {
    const char *name;       /* legend entry and axis title */
    const double *values;   /* one per x label; NULL = no series; a negative value = no point */
    const char *color;      /* an SVG colour, e.g. "#1f77b4" */
    int marked;             /* index of the point to mark, -1 for none */
    const char *mark_label; /* text beside the marked point */
} cli_plot_series;

typedef struct cli_plot {
    const char *title;
    const char *subtitle;   /* a second line under the title; may be NULL */
    const char *x_title;
    size_t points;          /* x labels (>= 1), evenly spaced left to right */
    const char *const *x_labels;
    cli_plot_series left;   /* its axis on the left; left.values must not be NULL */
    cli_plot_series right;  /* its axis on the right; right.values NULL = none */
    const char *note;       /* a line under the chart; may be NULL */
} cli_plot;

/* Writes the chart to path as a standalone SVG document. Returns 0, or CLI_EXIT_FAIL after a
 * message naming the file (the partial file is removed). */
int cli_plot_write_svg(const char *path, const cli_plot *plot);

#endif /* HARMONIA_CLI_PLOT_H */
