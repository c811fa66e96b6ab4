/* kmer_count.c - count the canonical k-mers of a genome with a GH_ADD map, checked against a sort.
 *
 *   example_kmer_count [FASTA [K]]
 *
 * FASTA: a plain (uncompressed) FASTA file, any number of records; without it, a small random
 * genome made here from a fixed seed (three records, a repeated segment, a run of N, soft-masked
 * lowercase bases), so that the test needs no file. K: 1..32, default 31.
 *
 * Each base is 2 bits (A=0, C=1, G=2, T=3); a k-mer is kept in its canonical form, the smaller of
 * itself and its reverse complement, so both strands count as one. K-mers containing anything but
 * ACGT (N, say) or spanning two records are dropped. Every k-mer goes into a warpdrive map (64-bit
 * keys, 32-bit values) with value 1 and GH_ADD, so each distinct k-mer ends up with its count;
 * gh_export gives them back. The reference: the k-mers sorted and counted run by run; every
 * (k-mer, count) must match, and the counts must sum to the number of k-mers.
 *
 * Runs on the GPU when there is one (GH_BACKEND_AUTO; the host arrays are passed as they are and
 * the library copies them), otherwise on the host backend. The time printed is the table's work:
 * gh_create, gh_insert and gh_export, copies included. Exit status 0: checked; 1: anything else.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuhash.h"

#define DEFAULT_K 31
#define GENERATED_SEED 20261127u
#define MAX_LOAD 0.7 /* the map's slots: at most this full even if every k-mer is distinct */
#define INVALID 4u
#define RECORD_SEPARATOR '|' /* between records: not a base, so no k-mer spans two records */

typedef struct {
  char *text;
  size_t length;
} buffer;

/* Appends n bytes; exits on allocation failure (an example: nothing to recover). */
static void append(buffer *b, const char *bytes, size_t n, size_t *capacity) {
  if (b->length + n > *capacity) {
    size_t grown = *capacity ? *capacity : 1 << 16;
    while (grown < b->length + n) grown *= 2;
    char *text = realloc(b->text, grown);
    if (!text) {
      fprintf(stderr, "out of memory for %zu bytes\n", grown);
      exit(1);
    }
    b->text = text;
    *capacity = grown;
  }
  memcpy(b->text + b->length, bytes, n);
  b->length += n;
}

/* 32 random bits: a 64-bit LCG's state, its bits mixed by an xor-shift, an odd multiplier and
 * another xor-shift (the raw outputs of an LCG lie on a lattice: too regular for test data). */
static uint32_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t x = *state ^ (*state >> 29);
  x *= 0x8f3a5c19e2b7d46bull;
  return (uint32_t)((x ^ (x >> 32)) >> 32);
}

/* A FASTA text: three records of random bases, 70 to a line, with the first record's first 5000
 * bases repeated in the second and third (so k-mers repeat), 40 N in the first and a lowercase
 * stretch in the second. */
static buffer generated_fasta(void) {
  static const size_t lengths[3] = {200000, 60000, 40000};
  const size_t repeat = 5000;
  uint64_t state = GENERATED_SEED;
  char *first = malloc(lengths[0]);
  buffer fasta = {NULL, 0};
  size_t capacity = 0;
  if (!first) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int record = 0; record < 3; ++record) {
    char header[64];
    const int header_length = snprintf(header, sizeof header, ">generated_%d seed %u\n", record + 1, GENERATED_SEED);
    append(&fasta, header, (size_t)header_length, &capacity);
    for (size_t i = 0; i < lengths[record]; ++i) {
      char base = "ACGT"[next_random(&state) & 3];
      if (record == 0) first[i] = base;
      if (record > 0 && i >= 1000 && i < 1000 + repeat) base = first[i - 1000];
      if (record == 0 && i >= 100000 && i < 100040) base = 'N';
      if (record == 1 && i >= 30000 && i < 31000) base = (char)(base - 'A' + 'a');
      append(&fasta, &base, 1, &capacity);
      if (i % 70 == 69 || i + 1 == lengths[record]) append(&fasta, "\n", 1, &capacity);
    }
  }
  free(first);
  return fasta;
}

static int read_file(const char *path, buffer *out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 0;
  }
  size_t capacity = 0;
  char chunk[1 << 16];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) append(out, chunk, got, &capacity);
  const int ok = !ferror(f);
  if (!ok) perror(path);
  fclose(f);
  return ok;
}

/* The sequence letters of every record, in place, RECORD_SEPARATOR before each record; header
 * and comment (';') lines and line ends dropped. Returns the number of records. */
static size_t strip_fasta(buffer *fasta) {
  size_t records = 0, kept = 0;
  int in_header = 0, at_line_start = 1;
  for (size_t i = 0; i < fasta->length; ++i) {
    const char c = fasta->text[i];
    if (at_line_start && (c == '>' || c == ';')) {
      in_header = 1;
      if (c == '>') {
        ++records;
        fasta->text[kept++] = RECORD_SEPARATOR;
      }
    }
    at_line_start = c == '\n';
    if (c == '\n') in_header = 0;
    else if (!in_header && c != '\r' && c != ' ' && c != '\t') fasta->text[kept++] = c;
  }
  fasta->length = kept;
  return records;
}

static unsigned base_code(char c) {
  switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': return 3;
    default: return INVALID;
  }
}

/* Writes the canonical k-mers of the sequence into kmers (room for length entries); returns how many. */
static size_t canonical_kmers(const buffer *sequence, unsigned k, uint64_t *kmers) {
  const uint64_t mask = k == 32 ? ~0ull : (1ull << (2 * k)) - 1;
  const unsigned top_shift = 2 * (k - 1);
  uint64_t forward = 0, reverse = 0;
  size_t run = 0, n = 0; /* run: valid bases in a row, up to the current one */
  for (size_t i = 0; i < sequence->length; ++i) {
    const unsigned code = base_code(sequence->text[i]);
    if (code == INVALID) {
      run = 0;
      continue;
    }
    forward = ((forward << 2) | code) & mask;
    reverse = (reverse >> 2) | ((uint64_t)(3 - code) << top_shift); /* the complement enters at the top */
    if (++run >= k) kmers[n++] = forward < reverse ? forward : reverse;
  }
  return n;
}

/* The reverse complement of a stripped sequence (record separators stay where the reversal puts
 * them), or text NULL when memory is short. */
static buffer reverse_complement(const buffer *sequence) {
  buffer rc = {malloc(sequence->length ? sequence->length : 1), sequence->length};
  for (size_t i = 0; rc.text && i < sequence->length; ++i) {
    const char base = sequence->text[sequence->length - 1 - i];
    const unsigned code = base_code(base);
    rc.text[i] = code == INVALID ? base : "TGCA"[code];
  }
  return rc;
}

static int compare_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

typedef struct {
  uint64_t kmer;
  uint32_t count;
} kmer_count;

static int compare_kmer_count(const void *a, const void *b) {
  return compare_u64(&((const kmer_count *)a)->kmer, &((const kmer_count *)b)->kmer);
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

static void print_kmer(uint64_t kmer, unsigned k) {
  for (unsigned j = 0; j < k; ++j) putchar("ACGT"[(kmer >> (2 * (k - 1 - j))) & 3]);
}

/* Counts with the table: (k-mer, count) pairs into out (room for n), their number into *distinct. */
static int count_with_table(const uint64_t *kmers, size_t n, kmer_count *out, uint64_t *distinct) {
  uint32_t *ones = malloc((n ? n : 1) * sizeof *ones);
  uint64_t *keys = malloc((n ? n : 1) * sizeof *keys);
  uint32_t *counts = malloc((n ? n : 1) * sizeof *counts);
  gh_table *table = NULL;
  int ok = 0;
  if (!ones || !keys || !counts) {
    fprintf(stderr, "out of memory for %zu k-mers\n", n);
    goto done;
  }
  for (size_t i = 0; i < n; ++i) ones[i] = 1;

  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  gh_config config = gh_config_default(GH_WARPDRIVE);
  config.key_bits = 64;
  config.value_bits = 32;
  config.capacity = (uint64_t)((double)n / MAX_LOAD) + 1024;
  gh_status status = gh_create(&config, &table);
  if (status != GH_OK) {
    fprintf(stderr, "gh_create: %s: %s\n", gh_status_name(status), gh_last_create_error());
    goto done;
  }
  status = gh_insert(table, kmers, ones, n, GH_ADD, NULL, NULL);
  if (status == GH_OK) status = gh_export(table, keys, counts, n, distinct, NULL);
  const double seconds = seconds_since(&start);
  if (status != GH_OK) {
    fprintf(stderr, "%s: %s\n", gh_status_name(status), gh_last_error(table));
    goto done;
  }
  printf("table: warpdrive on the %s backend, %.4f s (create + insert + export)\n",
         gh_table_backend(table) == GH_BACKEND_CUDA ? "CUDA" : "host", seconds);
  for (uint64_t i = 0; i < *distinct; ++i) out[i] = (kmer_count){keys[i], counts[i]};
  ok = 1;
done:
  gh_destroy(table);
  free(ones);
  free(keys);
  free(counts);
  return ok;
}

/* The reference: sorts kmers in place and compares each run's length with the table's count. */
static int check_counts(uint64_t *kmers, size_t n, kmer_count *table_counts, uint64_t distinct, unsigned k,
                        const char *source) {
  qsort(kmers, n, sizeof *kmers, compare_u64);
  qsort(table_counts, distinct, sizeof *table_counts, compare_kmer_count);
  uint64_t total = 0, runs = 0;
  for (size_t i = 0; i < n; ++runs) {
    size_t end = i;
    while (end < n && kmers[end] == kmers[i]) ++end;
    if (runs >= distinct || table_counts[runs].kmer != kmers[i] || table_counts[runs].count != end - i) {
      printf("check: FAILED (%s, k = %u): k-mer ", source, k);
      print_kmer(kmers[i], k);
      printf(" occurs %zu times; the table's k-mer number %" PRIu64 " in sorted order is ", end - i, runs);
      if (runs < distinct) {
        print_kmer(table_counts[runs].kmer, k);
        printf(" with count %u\n", table_counts[runs].count);
      } else {
        printf("missing (it has %" PRIu64 ")\n", distinct);
      }
      return 0;
    }
    i = end;
  }
  for (uint64_t j = 0; j < distinct; ++j) total += table_counts[j].count;
  if (runs != distinct || total != n) {
    printf("check: FAILED (%s, k = %u): %" PRIu64 " distinct k-mers summing to %" PRIu64
           ", the table has %" PRIu64 " summing to %" PRIu64 "\n", source, k, runs, (uint64_t)n, distinct, total);
    return 0;
  }
  return 1;
}

/* Canonical k-mers count both strands as one: the reverse complement of the genome must give the
 * same k-mers, as many times each (kmers: the genome's n, sorted by check_counts). A check of the
 * canonical form that a sort of the same k-mers cannot make. */
static int strand_symmetric(const buffer *sequence, unsigned k, const uint64_t *kmers, size_t n) {
  buffer rc = reverse_complement(sequence);
  uint64_t *other = malloc((sequence->length ? sequence->length : 1) * sizeof *other);
  int same = rc.text && other;
  if (!same) fprintf(stderr, "out of memory for the other strand\n");
  if (same) {
    const size_t m = canonical_kmers(&rc, k, other);
    qsort(other, m, sizeof *other, compare_u64);
    same = m == n && memcmp(other, kmers, n * sizeof *kmers) == 0;
    if (!same) printf("check: FAILED: the reverse complement gives %zu k-mers, not the genome's %zu (or others)\n", m, n);
  }
  free(rc.text);
  free(other);
  return same;
}

int main(int argc, char **argv) {
  if (argc > 3) {
    fprintf(stderr, "usage: %s [FASTA [K]]   (plain FASTA; without one, a generated genome)\n", argv[0]);
    return 1;
  }
  const int k_is_number = argc <= 2 || (argv[2][0] && strspn(argv[2], "0123456789") == strlen(argv[2]) &&
                                         strlen(argv[2]) <= 2);
  const unsigned k = argc > 2 && k_is_number ? (unsigned)strtoul(argv[2], NULL, 10) : DEFAULT_K;
  if (!k_is_number || k < 1 || k > 32) {
    fprintf(stderr, "K = %s: k-mers are 2 bits a base in 64 bits, so 1 <= K <= 32\n", argv[2]);
    return 1;
  }
  char source[128];
  buffer sequence = {NULL, 0};
  if (argc > 1) {
    if (!read_file(argv[1], &sequence)) {
      free(sequence.text);
      return 1;
    }
    snprintf(source, sizeof source, "%s", argv[1]);
  } else {
    sequence = generated_fasta();
    snprintf(source, sizeof source, "a generated genome, seed %u", GENERATED_SEED);
  }
  const size_t records = strip_fasta(&sequence);
  const char *not_fasta = records == 0 ? "no '>' header line: not a FASTA file"
                          : sequence.text[0] != RECORD_SEPARATOR ? "sequence before the first '>' header line"
                                                                  : NULL;
  if (not_fasta) {
    fprintf(stderr, "%s: %s\n", source, not_fasta);
    free(sequence.text);
    return 1;
  }
  uint64_t *kmers = malloc(sequence.length * sizeof *kmers);
  kmer_count *table_counts = malloc(sequence.length * sizeof *table_counts);
  uint64_t distinct = 0;
  size_t n = 0;
  int ok = kmers && table_counts;
  if (!ok) fprintf(stderr, "out of memory for %zu bases\n", sequence.length);
  if (ok) {
    n = canonical_kmers(&sequence, k, kmers);
    printf("genome: %s: %zu records, %zu bases; k = %u: %zu k-mers\n", source, records, sequence.length - records, k,
           n);
    ok = count_with_table(kmers, n, table_counts, &distinct);
  }
  if (ok) {
    uint64_t most = 0;
    for (uint64_t i = 1; i < distinct; ++i)
      if (table_counts[i].count > table_counts[most].count) most = i;
    printf("distinct k-mers: %" PRIu64, distinct);
    if (distinct) {
      printf("; the most frequent: ");
      print_kmer(table_counts[most].kmer, k);
      printf(" (%u times)", table_counts[most].count);
    }
    printf("\n");
    ok = check_counts(kmers, n, table_counts, distinct, k, source) && strand_symmetric(&sequence, k, kmers, n);
    if (ok) printf("check: OK (every count against a sort of the k-mers; the other strand's the same)\n");
  }
  free(kmers);
  free(table_counts);
  free(sequence.text);
  return ok ? 0 : 1;
}
