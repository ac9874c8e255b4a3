/* test_version.c — harmonia_version() of the shared library is the project's version (meson passes
 * it as the argument), and the generated header agrees. Links libharmonia.so as an embedder does,
 * with the public header only. */
#include <stdio.h>
#include <string.h>

#include <harmonia.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_version VERSION\n");
        return 2;
    }
    const char *version = harmonia_version();
    if (!version || strcmp(version, argv[1]) != 0) {
        fprintf(stderr, "harmonia_version() is '%s', the project's version is '%s'\n", version ? version : "(null)", argv[1]);
        return 1;
    }
    if (strcmp(HARMONIA_VERSION_STRING, argv[1]) != 0) {
        fprintf(stderr, "HARMONIA_VERSION_STRING is '%s', not '%s'\n", HARMONIA_VERSION_STRING, argv[1]);
        return 1;
    }
    char number[32];
    snprintf(number, sizeof number, "%d.%d.%d", HARMONIA_VERSION_MAJOR, HARMONIA_VERSION_MINOR, HARMONIA_VERSION_PATCH);
    if (strcmp(number, argv[1]) != 0 || HARMONIA_VERSION_NUMBER != HARMONIA_VERSION_MAJOR * 10000 + HARMONIA_VERSION_MINOR * 100 + HARMONIA_VERSION_PATCH) {
        fprintf(stderr, "the version macros say %s\n", number);
        return 1;
    }
    printf("harmonia %s\n", version);
    return 0;
}
