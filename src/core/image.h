/* image.h - what tests and the fuzzer need of the table image format (core/image.c) beyond the
 * public calls: sealing an image they have altered, so that it passes the checksums and its other
 * fields meet the loader's checks. */
#ifndef GH_CORE_IMAGE_H
#define GH_CORE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The header's size, and the byte offset of its fields (64-bit little-endian words). */
#define GH_IMAGE_HEADER_BYTES 192u
#define GH_IMAGE_AT_FORMAT 8u
#define GH_IMAGE_AT_DESIGN 16u
#define GH_IMAGE_AT_VARIANT 24u
#define GH_IMAGE_AT_KEY_BITS 32u
#define GH_IMAGE_AT_VALUE_BITS 40u
#define GH_IMAGE_AT_CAPACITY 48u
#define GH_IMAGE_AT_GROUP_SIZE 56u
#define GH_IMAGE_AT_COUNT 152u
#define GH_IMAGE_AT_PAYLOAD_BYTES 160u
#define GH_IMAGE_AT_BUCKET_SLOTS 176u
/* Format 1 (before bucket_slots) had the same words up to GH_IMAGE_AT_BUCKET_SLOTS, where its
 * header checksum was: a header of GH_IMAGE_HEADER_BYTES - 8 bytes. gpuhash still loads it. */

/* Rewrites the checksums of an image of `bytes` bytes (at least a header) to match its contents
 * (the payload's checksum over what follows the header, up to the size its header names or the
 * end, whichever is first). */
void gh__image_seal(void *image, size_t bytes);

#endif /* GH_CORE_IMAGE_H */
