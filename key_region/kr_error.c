/* kr_error.c — the message buffer through which the layout components report failures in words;
 * the front (harmonia/tree.c) copies it into the tree's or the thread's last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "key_region/key_region.h"

void kr_set_error(kr_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}
