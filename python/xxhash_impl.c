/* xxhash_impl.c — xxHash's functions compiled into the Python extension from its header (the
 * library calls XXH64 / XXH3 for its checksums), so that the wheel needs no libxxhash.so. */
#define XXH_IMPLEMENTATION
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
