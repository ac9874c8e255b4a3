/* cli_plot.c — the SVG line charts of cli_plot.h: axes with round ticks, a grid, one or two
 * series with their points, a marked point per series (ring, dashed guide, label), a legend and an
 * optional note. Plain SVG 1.1 text; no fonts or scripts beyond a generic sans-serif. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_plot.h"

/* Geometry of the chart (SVG user units = pixels). */
enum { WIDTH = 760, HEIGHT = 480, LEFT = 78, RIGHT = 86, TOP = 78, BOTTOM = 72 };

/* Writes s with the XML special characters escaped. */
static void xml_text(FILE *out, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* A round tick step (1, 2 or 5 times a power of ten) giving about 5 intervals up to top. */
static double tick_step(double top)
{
    double raw = top / 5.0;
    double power = pow(10.0, floor(log10(raw)));
    double fraction = raw / power;
    double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 5.0 ? 5.0 : 10.0;
    return nice * power;
}

/* The top of an axis for values up to max: a whole number of steps, with some headroom. */
static void axis_range(const double *values, size_t n, double *top_out, double *step_out)
{
    double max = 0.0;
    for (size_t i = 0; i < n; i++)
        if (values[i] > max)
            max = values[i];
    if (max <= 0.0)
        max = 1.0;
    double step = tick_step(max * 1.08);
    *top_out = ceil(max * 1.08 / step) * step;
    *step_out = step;
}

static void format_tick(char *buf, size_t size, double value, double step)
{
    int decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (decimals > 6)
        decimals = 6;
    snprintf(buf, size, "%.*f", decimals, value);
}

typedef struct frame {
    double x0, x1, y0, y1; /* plot area: x0 left, y0 bottom (SVG y grows downwards) */
    size_t points;
} frame;

static double x_at(const frame *f, size_t i)
{
    if (f->points <= 1)
        return (f->x0 + f->x1) / 2.0;
    double margin = 28.0;
    return f->x0 + margin + (f->x1 - f->x0 - 2 * margin) * (double)i / (double)(f->points - 1);
}

static double y_at(const frame *f, double value, double top)
{
    return f->y0 - (f->y0 - f->y1) * value / top;
}

static void draw_axis(FILE *out, const frame *f, const cli_plot_series *s, double top, double step,
                      bool left, bool grid)
{
    const double x = left ? f->x0 : f->x1;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x, f->y0, x,
            f->y1, s->color);
    for (int k = 0;; k++) {
        double value = step * k;
        if (value > top * (1 + 1e-9))
            break;
        double y = y_at(f, value, top);
        char label[32];
        format_tick(label, sizeof label, value, step);
        if (grid && k > 0)
            fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", f->x0,
                    y, f->x1, y);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x, y,
                left ? x - 5 : x + 5, y, s->color);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">%s</text>\n",
                left ? x - 8 : x + 8, y + 4, left ? "end" : "start", s->color, label);
    }
    /* the axis title, rotated along the axis */
    double tx = left ? 20.0 : WIDTH - 16.0, ty = (f->y0 + f->y1) / 2.0;
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\" transform=\"rotate(-90 %.1f %.1f)\">",
            tx, ty, s->color, tx, ty);
    xml_text(out, s->name);
    fputs("</text>\n", out);
}

static void draw_series(FILE *out, const frame *f, const cli_plot_series *s, double top, bool square)
{
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" points=\"", s->color);
    for (size_t i = 0; i < f->points; i++)
        if (s->values[i] >= 0)
            fprintf(out, "%.1f,%.1f ", x_at(f, i), y_at(f, s->values[i], top));
    fputs("\"/>\n", out);
    for (size_t i = 0; i < f->points; i++) {
        if (s->values[i] < 0)
            continue;
        double x = x_at(f, i), y = y_at(f, s->values[i], top);
        if (square)
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>\n", x - 4, y - 4,
                    s->color);
        else
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>\n", x, y, s->color);
    }
}

/* The marked point: a dashed guide down to the x axis, a ring, and the label above or below. */
static void draw_mark(FILE *out, const frame *f, const cli_plot_series *s, double top, bool label_below)
{
    if (s->marked < 0 || (size_t)s->marked >= f->points || s->values[s->marked] < 0)
        return;
    double x = x_at(f, (size_t)s->marked), y = y_at(f, s->values[s->marked], top);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>\n",
            x, y, x, f->y0, s->color);
    fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"/>\n", x,
            y, s->color);
    double ly = label_below ? y + 28 : y - 18;
    if (ly < f->y1 + 12)
        ly = y + 28;
    if (ly > f->y0 - 6)
        ly = y - 18;
    const char *anchor = x > (f->x0 + f->x1) / 2 ? "end" : "start";
    double lx = x > (f->x0 + f->x1) / 2 ? x - 12 : x + 12;
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\" font-weight=\"bold\" "
                 "stroke=\"white\" stroke-width=\"4\" paint-order=\"stroke\">", lx, ly,
            anchor, s->color);
    xml_text(out, s->mark_label);
    fputs("</text>\n", out);
}

int cli_plot_write_svg(const char *path, const cli_plot *plot)
{
    cli_writer w;
    int status = cli_writer_open(&w, path);
    if (status != 0)
        return status;
    FILE *out = w.file;
    const bool two = plot->right.values != NULL;
    frame f = {LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP, plot->points};
    double left_top, left_step, right_top = 1, right_step = 1;
    axis_range(plot->left.values, plot->points, &left_top, &left_step);
    if (two)
        axis_range(plot->right.values, plot->points, &right_top, &right_step);

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT);
    fputs("<title>", out);
    xml_text(out, plot->title);
    fputs("</title>\n", out);
    fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT);
    fprintf(out, "<text x=\"%d\" y=\"26\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">", WIDTH / 2);
    xml_text(out, plot->title);
    fputs("</text>\n", out);
    if (plot->subtitle) {
        fprintf(out, "<text x=\"%d\" y=\"46\" text-anchor=\"middle\" fill=\"#555\">", WIDTH / 2);
        xml_text(out, plot->subtitle);
        fputs("</text>\n", out);
    }

    /* frame, axes, x labels */
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n", f.x0,
            f.y1, f.x1 - f.x0, f.y0 - f.y1);
    draw_axis(out, &f, &plot->left, left_top, left_step, true, true);
    if (two)
        draw_axis(out, &f, &plot->right, right_top, right_step, false, false);
    for (size_t i = 0; i < plot->points; i++) {
        double x = x_at(&f, i);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", x, f.y0, x,
                f.y0 + 5);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, f.y0 + 20);
        xml_text(out, plot->x_labels[i]);
        fputs("</text>\n", out);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (f.x0 + f.x1) / 2, f.y0 + 42);
    xml_text(out, plot->x_title);
    fputs("</text>\n", out);

    /* series, marks (the left one's label above its point, the right one's below) */
    draw_series(out, &f, &plot->left, left_top, false);
    if (two)
        draw_series(out, &f, &plot->right, right_top, true);
    draw_mark(out, &f, &plot->left, left_top, false);
    if (two)
        draw_mark(out, &f, &plot->right, right_top, true);

    /* legend, above the plot area */
    double lx = f.x0;
    const cli_plot_series *legend[2] = {&plot->left, two ? &plot->right : NULL};
    for (int k = 0; k < 2 && legend[k]; k++) {
        fprintf(out, "<line x1=\"%.1f\" y1=\"64\" x2=\"%.1f\" y2=\"64\" stroke=\"%s\" stroke-width=\"2.5\"/>\n", lx,
                lx + 26, legend[k]->color);
        fprintf(out, "<text x=\"%.1f\" y=\"68\">", lx + 32);
        xml_text(out, legend[k]->name);
        fputs("</text>\n", out);
        lx += 40 + 7.2 * (double)strlen(legend[k]->name);
    }
    if (plot->note) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\" font-size=\"12\">", WIDTH / 2,
                HEIGHT - 8);
        xml_text(out, plot->note);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
    return cli_writer_close(&w);
}
