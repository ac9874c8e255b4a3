/* index_file.h — the Harmonia index file format (format version 1): the exact byte layout that
 * harmonia_save writes and harmonia_load maps, its invariants, and the constants the loader and
 * the tests share. The tree layout itself (what the sections mean) is in key_region/key_region.h;
 * the code is in index_file.c. Not part of the public API.
 *
 * ================================ THE FORMAT (read before any code) =============================
 *
 * An index file is a 4096-byte header page followed by four sections, each starting on a 4096-byte
 * boundary, so that a loaded tree points straight into a read-only mapping of the file. Every
 * integer is little-endian (the loader and the writer refuse to run on a big-endian host).
 *
 *     byte 0        4096            K            V            C              R          file_bytes
 *     | header page | key region   |pad| leaf values |pad| first child |pad| leaf rank |pad|
 *
 * HEADER (IX_HEADER_BYTES = 496 bytes at offset 0; bytes 496 .. 4095 are zero):
 *
 *   offset size  field            meaning
 *   ------ ----  ---------------  -------------------------------------------------------------
 *        0    8  magic            the 8 ASCII bytes "HARMONIA"
 *        8    4  format_version   1 (IX_FORMAT_VERSION); any other value: UNSUPPORTED
 *       12    4  header_bytes     496, the bytes covered by this table including the checksum
 *       16    8  file_bytes       the size of the whole file
 *       24    4  key_bits         32 or 64: width of keys and values (kr_tree.key_bits)
 *       28    4  fanout           F: power of two in [8, 128]
 *       32    4  leaf_size        L: power of two in [8, 128]
 *       36    4  height           levels, in [1, HARMONIA_MAX_LEVELS]; 1 = the root is a leaf
 *       40    8  n_keys           keys in the tree, <= n_leaves * L
 *       48    8  n_internal       internal nodes
 *       56    8  n_leaves         leaf nodes, >= 1
 *       64    8  n_nodes          n_internal + n_leaves, < 2^32
 *       72  264  level_start[33]  HARMONIA_MAX_LEVELS + 1 entries: level_start[0] = 0,
 *                                 level_start[1] = 1 (one root), strictly increasing up to
 *                                 level_start[height-1] = n_internal, level_start[height] = n_nodes;
 *                                 entries after [height] are 0
 *      336    8  tree_version     harmonia_tree.version (bumped by each update batch)
 *      344    4  ntg_group_size   the stored NTG choice: 0 (none) or a power of two <= 128
 *      348    4  flags            0; no flag is defined in version 1 (others: UNSUPPORTED)
 *      352    4  section_count    4
 *      356    4  reserved         0
 *      360  128  section table    4 entries of 32 bytes, in file order (below)
 *      488    8  header_checksum  XXH3_64bits (seed 0) of bytes 0 .. 487
 *
 * SECTION TABLE ENTRY (32 bytes; entry i at 360 + 32*i):
 *
 *   +0  4  id        i + 1: 1 key region, 2 leaf values, 3 first child, 4 leaf rank
 *   +4  4  reserved  0
 *   +8  8  offset    byte offset of the section in the file, a multiple of 4096
 *  +16  8  size      bytes of the section (exactly the size below; no padding included)
 *  +24  8  checksum  XXH3_64bits (seed 0) of the section's size bytes
 *
 * SECTIONS (the arrays of kr_tree, byte for byte, little-endian; W = key_bits / 8):
 *
 *   id  name          contents                                    size in bytes
 *    1  key region    kr.keys: n_internal*F + n_leaves*L keys     (n_internal*F + n_leaves*L) * W
 *    2  leaf values   kr.leaf_values: n_leaves*L values            n_leaves * L * W
 *    3  first child   kr.first_child: n_internal + 1 uint32        (n_internal + 1) * 4
 *    4  leaf rank     kr.leaf_rank: n_leaves + 1 uint64            (n_leaves + 1) * 8
 *
 * PLACEMENT. Section 1 starts at 4096; section i+1 starts at the first multiple of 4096 at or after
 * the end of section i; file_bytes is the end of section 4 rounded up to a multiple of 4096. Every
 * byte not in the header or in a section is zero. So the counts alone determine every offset and
 * size, the file is a whole number of pages, and every byte is covered by a checksum or required
 * to be zero: any single changed byte is detected.
 *
 * WHAT THE LOADER CHECKS, in this order, before it reads any section (each failure is an error
 * with the file name and the broken rule in words, never a crash, whatever the bytes):
 *   1. a regular, non-empty file; the magic (else CORRUPT "not a Harmonia index file");
 *   2. format_version == 1 (else UNSUPPORTED naming both versions); header_bytes == 496;
 *      the file holds the whole header;
 *   3. the header checksum;
 *   4. key_bits (UNSUPPORTED), F, L, height, the counts and level_start as in the table above, the
 *      NTG choice, flags and reserved fields;
 *   5. each section table entry: id, offset alignment, offset + size without uint64 overflow, size
 *      equal to what the counts imply, end within the file, offset equal to its placement;
 *   6. file_bytes equals the placement's end and the file's real size;
 *   7. the zero padding;
 *   8. the tree's structure (kr_check_structure, O(nodes)): first-child bounds and monotonicity,
 *      2..F children per node, each level's children exactly the next level, leaf ranks from 0 to
 *      n_keys with 1..L keys per leaf. This runs with and without verification, so that no reader
 *      of an unverified tree (queries, info, the updater, the GPU upload) leaves the arrays.
 * With harmonia_load_config.verify (the default) it then checks every section checksum and runs
 * kr_check_tree on the mapped arrays. Without verify, a file whose sections were damaged in ways
 * the structure checks cannot see (keys, separators, values) loads and queries on it may answer
 * wrongly, never crash; the tree is marked unverified and keeps the file's section checksums, and
 * its first update or save (or harmonia_check) verifies it in full (hm_verify_loaded), so damage
 * is never saved under fresh checksums. The file must not be truncated while a tree maps it (the
 * kernel would raise SIGBUS).
 *
 * WRITING. harmonia_save writes the whole file through hm_output (harmonia/safe_file.h): to
 * "<real path>.tmp.XXXXXX" in the real target's folder (links followed; only a regular file is
 * replaced; the old file's mode and owner kept), fsyncs it, renames it over the target and fsyncs
 * the folder; on any failure it removes the temporary file and leaves the target as it was. It
 * holds the target's exclusive flock meanwhile (or the tree's own, from a locked load) and
 * refuses (CONFLICT) to replace a file other than the one the tree was loaded from or last saved
 * to, when that is the path it saves to and the file changed or was replaced since.
 * ============================================================================================ */
#ifndef HARMONIA_INDEX_FILE_H
#define HARMONIA_INDEX_FILE_H

#include <stdint.h>

#include "harmonia.h"

#define IX_MAGIC "HARMONIA"
#define IX_MAGIC_BYTES 8u
#define IX_FORMAT_VERSION 1u
#define IX_ALIGN 4096u          /* section alignment and the size of the header page */
#define IX_SECTION_COUNT 4u
#define IX_LEVEL_ENTRIES (HARMONIA_MAX_LEVELS + 1)

/* Byte offsets of the header fields (format version 1). */
enum {
    IX_OFF_MAGIC = 0,
    IX_OFF_FORMAT_VERSION = 8,
    IX_OFF_HEADER_BYTES = 12,
    IX_OFF_FILE_BYTES = 16,
    IX_OFF_KEY_BITS = 24,
    IX_OFF_FANOUT = 28,
    IX_OFF_LEAF_SIZE = 32,
    IX_OFF_HEIGHT = 36,
    IX_OFF_N_KEYS = 40,
    IX_OFF_N_INTERNAL = 48,
    IX_OFF_N_LEAVES = 56,
    IX_OFF_N_NODES = 64,
    IX_OFF_LEVEL_START = 72, /* IX_LEVEL_ENTRIES uint64 */
    IX_OFF_TREE_VERSION = 336,
    IX_OFF_NTG_GROUP_SIZE = 344,
    IX_OFF_FLAGS = 348,
    IX_OFF_SECTION_COUNT = 352,
    IX_OFF_RESERVED = 356,
    IX_OFF_SECTIONS = 360,   /* IX_SECTION_COUNT entries of IX_SECTION_ENTRY_BYTES */
    IX_OFF_HEADER_CHECKSUM = 488,
    IX_HEADER_BYTES = 496,
};

/* Byte offsets inside one section table entry. */
enum {
    IX_SECTION_ENTRY_BYTES = 32,
    IX_SEC_OFF_ID = 0,
    IX_SEC_OFF_RESERVED = 4,
    IX_SEC_OFF_OFFSET = 8,
    IX_SEC_OFF_SIZE = 16,
    IX_SEC_OFF_CHECKSUM = 24,
};

/* Section ids, in file order. */
enum {
    IX_SECTION_KEY_REGION = 1,
    IX_SECTION_LEAF_VALUES = 2,
    IX_SECTION_FIRST_CHILD = 3,
    IX_SECTION_LEAF_RANK = 4,
};

_Static_assert(IX_OFF_LEVEL_START + 8 * IX_LEVEL_ENTRIES == IX_OFF_TREE_VERSION,
               "level_start[] must end where tree_version begins");
_Static_assert(IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * IX_SECTION_COUNT ==
                   IX_OFF_HEADER_CHECKSUM,
               "the section table must end where the header checksum begins");
_Static_assert(IX_HEADER_BYTES <= IX_ALIGN, "the header must fit in its page");

/* The header checksum of a header (IX_HEADER_BYTES bytes): XXH3_64bits of the bytes before the
 * checksum field. Exposed for the tests, which edit headers and fix the checksum up. */
uint64_t ix_header_checksum(const unsigned char *header);

/* The name of a section id ("key region", ...), or "unknown" . */
const char *ix_section_name(uint32_t id);

#endif /* HARMONIA_INDEX_FILE_H */
