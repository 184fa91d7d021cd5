// Apple's LZFSE stream format, decoding only. The format follows Apple's reference
// implementation (github.com/lzfse/lzfse: lzfse_decode_base.c, lzvn_decode_base.c, lzfse_fse.h,
// lzfse_internal.h); this is a separate implementation written for hostile input, not a copy.
//
// A stream is a sequence of blocks, each starting with a 4-byte magic (little-endian in the file):
//   "bvx$"  end of stream
//   "bvx-"  raw: n_raw_bytes (u32), then the bytes
//   "bvxn"  LZVN: n_raw_bytes, n_payload_bytes (u32 each), then LZVN opcodes
//   "bvx1"  LZFSE with its frequency tables stored as u16 (a 772-byte header)
//   "bvx2"  LZFSE with the header's fields packed in three u64 and the tables in a prefix code
// An LZFSE block holds two FSE (tANS) bit streams, each read backwards from the end of its
// payload: the literals (four interleaved states) and the L, M, D triplets (literal length,
// match length, match distance). Matches may reach back into earlier blocks' output.
//
// Hostile input: every header field is range-checked before use (table states, frequency sums,
// literal and match counts), each block's output is bounded by its header's n_raw_bytes and the
// caller's capacity before a byte is written and must come out exactly that long, match
// distances are checked against the output written so far, literal runs against the block's
// decoded literals, and bit-stream reads against the payload. Decoder tables are built only
// from frequency tables whose sum fits the state count, which keeps every next state in range
// (see build_table) and every pull within the bits a refill guarantees.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dl_lzfse.h"

#define MAGIC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define MAGIC_END MAGIC('b', 'v', 'x', '$')
#define MAGIC_RAW MAGIC('b', 'v', 'x', '-')
#define MAGIC_LZVN MAGIC('b', 'v', 'x', 'n')
#define MAGIC_V1 MAGIC('b', 'v', 'x', '1')
#define MAGIC_V2 MAGIC('b', 'v', 'x', '2')

enum {
    L_SYMBOLS = 20, M_SYMBOLS = 20, D_SYMBOLS = 64, LIT_SYMBOLS = 256,
    L_STATES = 64, M_STATES = 64, D_STATES = 256, LIT_STATES = 1024,
    MAX_MATCHES = 10000, MAX_LITERALS = 40000,  // per block
    V1_HEADER_SIZE = 772,                        // the v1 header struct as stored (with its 2 padding bytes)
    V2_FIXED_SIZE = 32,                          // magic, n_raw_bytes, three packed u64
    LITERAL_SLACK = 7,                           // see bits_init
};

// Extra bits of each L, M, D symbol; a symbol's base value is the previous base plus
// 2^(previous extra bits), from 0. D's extra bits are symbol / 4.
static const uint8_t l_extra[L_SYMBOLS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 8};
static const uint8_t m_extra[M_SYMBOLS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 8, 11};

// MARK: Errors

typedef struct {
    char *error;
    size_t error_len;
    size_t block;        // index of the block being read
    size_t offset;       // its offset in the input
    const char *kind;    // its magic as text
} context;

static int fail(context *c, const char *format, ...) {
    if (!c->error || c->error_len == 0) return -1;
    int n = 0;
    if (c->kind) n = snprintf(c->error, c->error_len, "block %zu (%s) at byte %zu: ", c->block, c->kind, c->offset);
    if (n < 0) n = 0;
    if ((size_t)n < c->error_len) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(c->error + n, c->error_len - (size_t)n, format, ap);
        va_end(ap);
    }
    return -1;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

// MARK: Block headers

typedef struct {
    uint32_t magic;
    uint32_t n_raw;
    size_t header_size;
    size_t payload_size;
    // LZFSE blocks (v1, v2), in the v1 layout
    uint32_t n_literals, n_matches, n_literal_payload, n_lmd_payload;
    int32_t literal_bits, lmd_bits;
    uint16_t literal_state[4], l_state, m_state, d_state;
    uint16_t l_freq[L_SYMBOLS], m_freq[M_SYMBOLS], d_freq[D_SYMBOLS], lit_freq[LIT_SYMBOLS];
} block_header;

static const char *kind_of(uint32_t magic) {
    switch (magic) {
    case MAGIC_END: return "bvx$";
    case MAGIC_RAW: return "bvx-";
    case MAGIC_LZVN: return "bvxn";
    case MAGIC_V1: return "bvx1";
    case MAGIC_V2: return "bvx2";
    default: return NULL;
    }
}

/// The v2 header's frequency tables: a prefix code read from the least significant bit.
/// ...0 → 2 bits, value 0–1; ..01 → 3 bits, 2–3; .011 → 5 bits, 4–7; 0111 → 8 bits, 8 + next 4
/// bits; 1111 → 14 bits, 24 + next 10 bits.
static int read_v2_freqs(context *c, const uint8_t *p, size_t n, block_header *h) {
    uint16_t *freq[4] = {h->l_freq, h->m_freq, h->d_freq, h->lit_freq};
    const int count[4] = {L_SYMBOLS, M_SYMBOLS, D_SYMBOLS, LIT_SYMBOLS};
    uint32_t accum = 0;
    int nbits = 0;
    size_t i = 0;
    if (n == 0) return 0;  // tables omitted: all zero
    for (int t = 0; t < 4; t++) {
        for (int s = 0; s < count[t]; s++) {
            while (i < n && nbits + 8 <= 32) {
                accum |= (uint32_t)p[i++] << nbits;
                nbits += 8;
            }
            int len;
            uint32_t value;
            if ((accum & 1) == 0) { len = 2; value = (accum >> 1) & 1; }
            else if ((accum & 3) == 1) { len = 3; value = 2 + ((accum >> 2) & 1); }
            else if ((accum & 7) == 3) { len = 5; value = 4 + ((accum >> 3) & 3); }
            else if ((accum & 15) == 7) { len = 8; value = 8 + ((accum >> 4) & 15); }
            else { len = 14; value = 24 + ((accum >> 4) & 1023); }
            if (len > nbits) return fail(c, "frequency tables end early");
            freq[t][s] = (uint16_t)value;
            accum >>= len;
            nbits -= len;
        }
    }
    if (nbits >= 8 || i != n) return fail(c, "frequency tables do not fill their header");
    return 0;
}

static int check_freqs(context *c, const uint16_t *freq, int symbols, int states, const char *what) {
    uint32_t sum = 0;
    for (int i = 0; i < symbols; i++) sum += freq[i];
    if (sum > (uint32_t)states) return fail(c, "%s frequencies sum to %u, more than its %d states", what, sum, states);
    return 0;
}

/// Reads and checks the header of the block at `pos`: its fields in range and its header and
/// payload inside the input.
static int read_header(context *c, const uint8_t *src, size_t size, size_t pos, block_header *h) {
    c->offset = pos;
    c->kind = NULL;
    size_t left = size - pos;
    if (left < 4) return fail(c, "ends at byte %zu without its end-of-stream block (bvx$)", size);
    h->magic = le32(src + pos);
    c->kind = kind_of(h->magic);
    if (!c->kind) {
        return fail(c, "block %zu at byte %zu: unknown block magic %02x %02x %02x %02x", c->block, pos,
                    src[pos], src[pos + 1], src[pos + 2], src[pos + 3]);
    }
    h->n_raw = 0;
    h->payload_size = 0;
    const uint8_t *p = src + pos;
    switch (h->magic) {
    case MAGIC_END:
        h->header_size = 4;
        return 0;
    case MAGIC_RAW:
        h->header_size = 8;
        if (left < 8) return fail(c, "header cut short");
        h->n_raw = le32(p + 4);
        h->payload_size = h->n_raw;
        break;
    case MAGIC_LZVN:
        h->header_size = 12;
        if (left < 12) return fail(c, "header cut short");
        h->n_raw = le32(p + 4);
        h->payload_size = le32(p + 8);
        break;
    case MAGIC_V1: {
        h->header_size = V1_HEADER_SIZE;
        if (left < V1_HEADER_SIZE) return fail(c, "header cut short");
        h->n_raw = le32(p + 4);
        // p + 8: n_payload_bytes, unused (the two payload sizes below say it)
        h->n_literals = le32(p + 12);
        h->n_matches = le32(p + 16);
        h->n_literal_payload = le32(p + 20);
        h->n_lmd_payload = le32(p + 24);
        h->literal_bits = (int32_t)le32(p + 28);
        for (int i = 0; i < 4; i++) h->literal_state[i] = (uint16_t)(p[32 + 2 * i] | p[33 + 2 * i] << 8);
        h->lmd_bits = (int32_t)le32(p + 40);
        h->l_state = (uint16_t)(p[44] | p[45] << 8);
        h->m_state = (uint16_t)(p[46] | p[47] << 8);
        h->d_state = (uint16_t)(p[48] | p[49] << 8);
        const uint8_t *f = p + 50;
        for (int i = 0; i < L_SYMBOLS; i++, f += 2) h->l_freq[i] = (uint16_t)(f[0] | f[1] << 8);
        for (int i = 0; i < M_SYMBOLS; i++, f += 2) h->m_freq[i] = (uint16_t)(f[0] | f[1] << 8);
        for (int i = 0; i < D_SYMBOLS; i++, f += 2) h->d_freq[i] = (uint16_t)(f[0] | f[1] << 8);
        for (int i = 0; i < LIT_SYMBOLS; i++, f += 2) h->lit_freq[i] = (uint16_t)(f[0] | f[1] << 8);
        break;
    }
    case MAGIC_V2: {
        if (left < V2_FIXED_SIZE) return fail(c, "header cut short");
        h->n_raw = le32(p + 4);
        uint64_t v0 = le64(p + 8), v1 = le64(p + 16), v2 = le64(p + 24);
        h->n_literals = (uint32_t)(v0 & 0xFFFFF);
        h->n_literal_payload = (uint32_t)(v0 >> 20 & 0xFFFFF);
        h->n_matches = (uint32_t)(v0 >> 40 & 0xFFFFF);
        h->literal_bits = (int32_t)(v0 >> 60 & 7) - 7;
        for (int i = 0; i < 4; i++) h->literal_state[i] = (uint16_t)(v1 >> (10 * i) & 0x3FF);
        h->n_lmd_payload = (uint32_t)(v1 >> 40 & 0xFFFFF);
        h->lmd_bits = (int32_t)(v1 >> 60 & 7) - 7;
        uint32_t header_size = (uint32_t)(v2 & 0xFFFFFFFF);
        h->l_state = (uint16_t)(v2 >> 32 & 0x3FF);
        h->m_state = (uint16_t)(v2 >> 42 & 0x3FF);
        h->d_state = (uint16_t)(v2 >> 52 & 0x3FF);
        if (header_size < V2_FIXED_SIZE) return fail(c, "header size %u is less than %d", header_size, V2_FIXED_SIZE);
        if (header_size > left) return fail(c, "header of %u bytes cut short at byte %zu", header_size, size);
        h->header_size = header_size;
        memset(h->l_freq, 0, sizeof h->l_freq);
        memset(h->m_freq, 0, sizeof h->m_freq);
        memset(h->d_freq, 0, sizeof h->d_freq);
        memset(h->lit_freq, 0, sizeof h->lit_freq);
        if (read_v2_freqs(c, p + V2_FIXED_SIZE, header_size - V2_FIXED_SIZE, h) != 0) return -1;
        break;
    }
    }
    if (h->magic == MAGIC_V1 || h->magic == MAGIC_V2) {
        h->payload_size = (size_t)h->n_literal_payload + h->n_lmd_payload;
        if (h->n_literals > MAX_LITERALS) return fail(c, "%u literals, more than %d", h->n_literals, MAX_LITERALS);
        if (h->n_matches > MAX_MATCHES) return fail(c, "%u matches, more than %d", h->n_matches, MAX_MATCHES);
        if (h->literal_bits < -7 || h->literal_bits > 0 || h->lmd_bits < -7 || h->lmd_bits > 0)
            return fail(c, "bit counts %d and %d outside -7…0", h->literal_bits, h->lmd_bits);
        for (int i = 0; i < 4; i++)
            if (h->literal_state[i] >= LIT_STATES) return fail(c, "literal state %u out of range", h->literal_state[i]);
        if (h->l_state >= L_STATES || h->m_state >= M_STATES || h->d_state >= D_STATES)
            return fail(c, "L, M, D states %u, %u, %u out of range", h->l_state, h->m_state, h->d_state);
        if (check_freqs(c, h->l_freq, L_SYMBOLS, L_STATES, "L") || check_freqs(c, h->m_freq, M_SYMBOLS, M_STATES, "M")
            || check_freqs(c, h->d_freq, D_SYMBOLS, D_STATES, "D")
            || check_freqs(c, h->lit_freq, LIT_SYMBOLS, LIT_STATES, "literal"))
            return -1;
    }
    if (h->payload_size > left - h->header_size)
        return fail(c, "payload of %zu bytes cut short at byte %zu", h->payload_size, size);
    return 0;
}

int dl_lzfse_decoded_size(const uint8_t *src, size_t size, uint64_t *decoded, char *error, size_t error_len) {
    context c = {error, error_len, 0, 0, NULL};
    block_header h;
    uint64_t total = 0;
    size_t pos = 0;
    if (error && error_len) error[0] = 0;
    for (;; c.block++) {
        if (read_header(&c, src, size, pos, &h) != 0) return -1;
        if (h.magic == MAGIC_END) break;
        total += h.n_raw;  // below 2^32 per block of at least 8 bytes: no overflow
        pos += h.header_size + h.payload_size;
    }
    *decoded = total;
    return 0;
}

// MARK: FSE bit streams

/// A bit stream read backwards from the end of its payload, the most significant bits first, as
/// the reference's fse_in_stream64: the accumulator holds `nbits` bits (56…63 after a refill).
/// `pos` is the offset of the lowest byte read so far; bytes at offsets below 0 (down to `floor`)
/// read as zero (see bits_init).
typedef struct {
    uint64_t accum;
    int nbits;
    const uint8_t *base;
    ptrdiff_t pos;
    ptrdiff_t size;
    ptrdiff_t floor;
} bit_stream;

/// The little-endian value of `n` (0…8) bytes at offset `at`, bytes before the payload as zero.
static inline uint64_t load_bytes(const bit_stream *s, ptrdiff_t at, int n) {
    if (n == 0) return 0;
    if (__builtin_expect(at >= 0 && at + 8 <= s->size, 1)) {
        uint64_t v = le64(s->base + at);
        return n == 8 ? v : v & (((uint64_t)1 << (8 * n)) - 1);
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        if (at + i >= 0) v |= (uint64_t)s->base[at + i] << (8 * i);
    return v;
}

/// Starts reading at the end of the payload; `bits` (−7…0, from the header) is how many bits of
/// the last byte the encoder left unused, negated. The literal stream has no padding before it,
/// and the reference decoder's refills may read up to 7 bytes before its payload (into the
/// header; they are never consumed in a valid stream): here they read as zero (`floor` −7). The
/// L, M, D stream starts with 8 bytes of padding, and its refills stay inside it (`floor` 0).
static int bits_init(context *c, bit_stream *s, const uint8_t *base, size_t size, int bits, ptrdiff_t floor,
                     const char *what) {
    s->base = base;
    s->size = (ptrdiff_t)size;
    s->floor = floor;
    int n = bits == 0 ? 7 : 8;
    s->pos = s->size - n;
    if (s->pos < floor) return fail(c, "%s stream of %zu bytes is too short", what, size);
    s->accum = load_bytes(s, s->pos, n);
    s->nbits = bits + 8 * n;
    if (s->nbits < 56 || s->nbits > 63 || (s->accum >> s->nbits) != 0)
        return fail(c, "%s stream does not start as its header says", what);
    return 0;
}

/// Refills the accumulator to 56…63 bits; -1 when that would read before the payload.
static inline int bits_refill(bit_stream *s) {
    int n = (63 - s->nbits) >> 3;
    if (s->pos - n < s->floor) return -1;
    s->pos -= n;
    s->accum = (s->accum << (8 * n)) | load_bytes(s, s->pos, n);
    s->nbits += 8 * n;
    return 0;
}

/// The next `n` bits (n ≤ nbits: the tables' bit counts keep every pull within a refill).
static inline uint32_t bits_pull(bit_stream *s, int n) {
    s->nbits -= n;
    uint64_t r = s->accum >> s->nbits;
    s->accum &= ((uint64_t)1 << s->nbits) - 1;  // nbits ≤ 63
    return (uint32_t)r;
}

/// A decoder table entry: the symbol (literals) or value base and extra bits (L, M, D), the
/// bits to read for the next state, and the next state's base.
typedef struct {
    uint8_t state_bits;
    uint8_t extra_bits;
    uint16_t next_base;
    int32_t value;
} fse_entry;

/// Builds the decoder table of `states` (a power of two) states from `freq` (sum ≤ states,
/// checked with the header): symbol i takes freq[i] consecutive states. With f = freq[i] and k
/// the shift putting f·2^k in [states, 2·states), the symbol's first j0 = 2·states/2^k − f states
/// read k bits and the rest k − 1, so that every next state (base + bits read) is below `states`.
/// States past the sum stay zero (state 0, value 0): a hostile table decodes garbage, in range.
static void build_table(fse_entry *t, int states, int symbols, const uint16_t *freq, const uint8_t *extra,
                        int literal) {
    memset(t, 0, sizeof(fse_entry) * (size_t)states);
    int log_states = __builtin_ctz((unsigned)states);
    int32_t base = 0;
    int at = 0;
    for (int i = 0; i < symbols; i++) {
        int f = freq[i];
        int e = literal ? 0 : extra[i];
        int32_t value = literal ? i : base;
        if (!literal) base += (int32_t)1 << e;
        if (f == 0) continue;
        int k = log_states - (31 - __builtin_clz((unsigned)f));  // f·2^k in [states, 2·states)
        int j0 = ((2 * states) >> k) - f;
        for (int j = 0; j < f; j++, at++) {
            fse_entry x;
            x.extra_bits = (uint8_t)e;
            x.value = value;
            if (j < j0) {
                x.state_bits = (uint8_t)k;
                x.next_base = (uint16_t)(((f + j) << k) - states);
            } else {
                x.state_bits = (uint8_t)(k - 1);
                x.next_base = (uint16_t)((j - j0) << (k - 1));
            }
            t[at] = x;
        }
    }
}

/// D's table: extra bits symbol / 4.
static void d_extra_table(uint8_t *d) {
    for (int i = 0; i < D_SYMBOLS; i++) d[i] = (uint8_t)(i / 4);
}

static inline int32_t decode_value(const fse_entry *t, uint16_t *state, bit_stream *s) {
    fse_entry e = t[*state];
    uint32_t b = bits_pull(s, e.state_bits + e.extra_bits);
    *state = (uint16_t)(e.next_base + (b >> e.extra_bits));
    return e.value + (int32_t)(b & ((1u << e.extra_bits) - 1));
}

/// A literal decoder entry: fse_entry in 4 bytes (the 1024-state table stays in 4 KB).
typedef struct {
    uint8_t state_bits;
    uint8_t symbol;
    uint16_t next_base;
} literal_entry;

static inline uint8_t decode_literal(const literal_entry *t, uint16_t *state, bit_stream *s) {
    literal_entry e = t[*state];
    *state = (uint16_t)(e.next_base + bits_pull(s, e.state_bits));
    return e.symbol;
}

// MARK: Output

/// Copies a match of `m` bytes from `d` bytes back (1 ≤ d ≤ bytes written, checked by the
/// caller), overlapping as a byte-by-byte forward copy would: each memcpy copies from a source
/// that ends where the destination begins, the repeated span doubling.
static inline void copy_match(uint8_t *out, size_t d, size_t m) {
    if (d >= m) {
        memcpy(out, out - d, m);
        return;
    }
    if (d == 1) {
        memset(out, out[-1], m);
        return;
    }
    const uint8_t *from = out - d;
    size_t done = 0;
    while (done < m) {
        size_t n = d + done;  // the span from `from` up to out + done, a whole number of periods
        if (n > m - done) n = m - done;
        memcpy(out + done, from, n);
        done += n;
    }
}

/// Copies `n` bytes in 16-byte pieces, writing up to 15 bytes past `n` (and reading as far past
/// `src`): only where the caller has checked the room. Overlap is fine when src + 16 ≤ dst.
static inline void copy_wide(uint8_t *dst, const uint8_t *src, size_t n) {
    uint8_t *end = dst + n;
    do {
        memcpy(dst, src, 16);
        dst += 16;
        src += 16;
    } while (dst < end);
}

// MARK: LZFSE blocks

enum { WIDE_ROOM = 32 };  // output room the wide copies need past a literal and match

typedef struct {
    fse_entry l[L_STATES], m[M_STATES], d[D_STATES], lit_build[LIT_STATES];
    literal_entry lit[LIT_STATES];
    uint8_t literals[MAX_LITERALS + 4 + WIDE_ROOM];  // n_literals rounded to 4, then the wide copies' reach
} lzfse_work;

/// Decodes the block into dst[start, start + n_raw) (the caller checked it fits `capacity`).
/// Where the output has room past the block's current triplet (WIDE_ROOM), literals and matches
/// of distance ≥ 16 are copied in 16-byte pieces; the bytes written past a triplet lie inside
/// dst[0, capacity) and are overwritten by the following triplets and blocks (a stream that
/// fails halfway is discarded whole by the caller).
static int decode_lzfse_block(context *c, const block_header *h, const uint8_t *payload, uint8_t *dst, size_t start,
                              size_t capacity, lzfse_work *w) {
    uint8_t d_extra[D_SYMBOLS];
    d_extra_table(d_extra);
    build_table(w->l, L_STATES, L_SYMBOLS, h->l_freq, l_extra, 0);
    build_table(w->m, M_STATES, M_SYMBOLS, h->m_freq, m_extra, 0);
    build_table(w->d, D_STATES, D_SYMBOLS, h->d_freq, d_extra, 0);
    build_table(w->lit_build, LIT_STATES, LIT_SYMBOLS, h->lit_freq, NULL, 1);
    for (int i = 0; i < LIT_STATES; i++) {
        w->lit[i] = (literal_entry){w->lit_build[i].state_bits, (uint8_t)w->lit_build[i].value, w->lit_build[i].next_base};
    }

    // Literals: four interleaved states, four literals per refill (at most 4 × 10 bits).
    bit_stream s;
    if (bits_init(c, &s, payload, h->n_literal_payload, h->literal_bits, -LITERAL_SLACK, "literal") != 0) return -1;
    uint16_t st[4] = {h->literal_state[0], h->literal_state[1], h->literal_state[2], h->literal_state[3]};
    for (uint32_t i = 0; i < h->n_literals; i += 4) {
        if (bits_refill(&s) != 0) return fail(c, "literal stream ends after %u of %u literals", i, h->n_literals);
        w->literals[i + 0] = decode_literal(w->lit, &st[0], &s);
        w->literals[i + 1] = decode_literal(w->lit, &st[1], &s);
        w->literals[i + 2] = decode_literal(w->lit, &st[2], &s);
        w->literals[i + 3] = decode_literal(w->lit, &st[3], &s);
    }

    // L, M, D triplets: one refill each (at most 14 + 17 + 23 = 54 bits).
    if (bits_init(c, &s, payload + h->n_literal_payload, h->n_lmd_payload, h->lmd_bits, 0, "L, M, D") != 0) return -1;
    uint16_t ls = h->l_state, ms = h->m_state, ds = h->d_state;
    size_t o = start, end = start + h->n_raw;
    uint32_t lit = 0;
    int64_t d = -1;  // no distance yet: a first triplet repeating "the previous one" is an error
    for (uint32_t i = 0; i < h->n_matches; i++) {
        if (bits_refill(&s) != 0) return fail(c, "L, M, D stream ends after %u of %u matches", i, h->n_matches);
        uint32_t l = (uint32_t)decode_value(w->l, &ls, &s);
        uint32_t m = (uint32_t)decode_value(w->m, &ms, &s);
        int32_t nd = decode_value(w->d, &ds, &s);
        if (nd != 0) d = nd;
        if (l > h->n_literals - lit)
            return fail(c, "match %u takes %u literals, %u are left of %u", i, l, h->n_literals - lit, h->n_literals);
        if ((size_t)l + m > end - o)
            return fail(c, "match %u writes past the %u bytes the header declares", i, h->n_raw);
        if (d < 0 || (uint64_t)d > o + l)
            return fail(c, "match %u: distance %lld before the start of the output (%zu bytes written)", i,
                        (long long)d, o + l);
        if (__builtin_expect(capacity - o >= (size_t)l + m + WIDE_ROOM, 1)) {
            copy_wide(dst + o, w->literals + lit, l);
            o += l;
            lit += l;
            if (d >= 16) copy_wide(dst + o, dst + o - d, m);
            else if (m) copy_match(dst + o, (size_t)d, m);  // 1 ≤ d ≤ o
            o += m;
            continue;
        }
        memcpy(dst + o, w->literals + lit, l);
        o += l;
        lit += l;
        if (m) {
            copy_match(dst + o, (size_t)d, m);  // 1 ≤ d ≤ o
            o += m;
        }
    }
    if (o != end) return fail(c, "decodes to %zu bytes, its header says %u", o - start, h->n_raw);
    return 0;
}

// MARK: LZVN blocks

/// LZVN opcodes, by their first byte (L literal bytes follow the opcode; M match bytes are copied
/// from D back; "previous" reuses the last D):
///   LLMMMDDD DDDDDDDD          small distance   (low bits 0–5; L 0–3, M 3–10, D < 2048)
///   LLMMM110                   previous distance (from 0x46; 0x06 end of stream, 0x0E and 0x16
///                                                 no-ops, 0x1E…0x3E undefined)
///   LLMMM111 DDDDDDDD DDDDDDDD large distance   (D little-endian)
///   101LLMMM DDDDDDMM DDDDDDDD medium distance  (0xA0–0xBF; M 5 bits, D 14 bits)
///   1110LLLL / 11100000 LLLLLLLL  literal only  (L 1–15 / 16 + byte)
///   1111MMMM / 11110000 MMMMMMMM  match only, previous distance (M 1–15 / 16 + byte)
///   0111xxxx, 1101xxxx          undefined
/// End of stream: 0x06 and 7 more bytes (the last 8 of the payload).
static int decode_lzvn_block(context *c, const block_header *h, const uint8_t *p, uint8_t *dst, size_t start) {
    size_t n = h->payload_size, i = 0;
    size_t o = start, end = start + h->n_raw;
    size_t d = 0;
    for (;;) {
        if (i >= n) return fail(c, "LZVN payload ends without its end-of-stream opcode");
        uint8_t op = p[i];
        size_t oplen, l = 0, m = 0;
        if (op == 0x06) {
            if (n - i < 8) return fail(c, "LZVN end-of-stream opcode cut short");
            i += 8;
            break;
        }
        if (op == 0x0E || op == 0x16) {
            i++;
            continue;
        }
        if ((op & 0xF0) == 0x70 || (op & 0xF0) == 0xD0 || ((op & 7) == 6 && op < 0x40))
            return fail(c, "undefined LZVN opcode 0x%02x at payload byte %zu", op, i);
        if ((op & 0xE0) == 0xA0) {  // medium distance
            oplen = 3;
            if (n - i < 3) return fail(c, "LZVN opcode cut short at payload byte %zu", i);
            uint32_t v = (uint32_t)p[i + 1] | (uint32_t)p[i + 2] << 8;
            l = (op >> 3) & 3;
            m = (((size_t)op & 7) << 2 | (v & 3)) + 3;
            d = v >> 2;
        } else if (op == 0xE0 || op == 0xF0) {  // large literal or large match
            oplen = 2;
            if (n - i < 2) return fail(c, "LZVN opcode cut short at payload byte %zu", i);
            if (op == 0xE0) l = (size_t)p[i + 1] + 16;
            else m = (size_t)p[i + 1] + 16;
        } else if ((op & 0xF0) == 0xE0) {  // small literal
            oplen = 1;
            l = op & 15;
        } else if ((op & 0xF0) == 0xF0) {  // small match
            oplen = 1;
            m = op & 15;
        } else {
            l = op >> 6;
            m = ((op >> 3) & 7) + 3;
            if ((op & 7) == 7) {  // large distance
                oplen = 3;
                if (n - i < 3) return fail(c, "LZVN opcode cut short at payload byte %zu", i);
                d = (size_t)p[i + 1] | (size_t)p[i + 2] << 8;
            } else if ((op & 7) == 6) {  // previous distance
                oplen = 1;
            } else {  // small distance
                oplen = 2;
                if (n - i < 2) return fail(c, "LZVN opcode cut short at payload byte %zu", i);
                d = ((size_t)op & 7) << 8 | p[i + 1];
            }
        }
        if (n - i < oplen + l) return fail(c, "LZVN literal cut short at payload byte %zu", i);
        if (l + m > end - o) return fail(c, "LZVN opcode at payload byte %zu writes past the %u bytes the header declares",
                                         i, h->n_raw);
        memcpy(dst + o, p + i + oplen, l);
        o += l;
        i += oplen + l;
        if (m) {
            if (d == 0 || d > o)
                return fail(c, "LZVN match distance %zu before the start of the output (%zu bytes written)", d, o);
            copy_match(dst + o, d, m);
            o += m;
        }
    }
    if (i != n) return fail(c, "LZVN end-of-stream opcode %zu bytes before the end of its payload", n - i);
    if (o != end) return fail(c, "decodes to %zu bytes, its header says %u", o - start, h->n_raw);
    return 0;
}

// MARK: Streams

int dl_lzfse_decode(const uint8_t *src, size_t size, uint8_t *dst, size_t capacity, size_t *written,
                    char *error, size_t error_len) {
    context c = {error, error_len, 0, 0, NULL};
    block_header h;
    lzfse_work *w = NULL;
    size_t pos = 0, o = 0;
    int result = -1;
    if (error && error_len) error[0] = 0;
    for (;; c.block++) {
        if (read_header(&c, src, size, pos, &h) != 0) goto done;
        if (h.magic == MAGIC_END) break;
        if (h.n_raw > capacity - o) {
            fail(&c, "%u more bytes would decode past the %zu expected", h.n_raw, capacity);
            goto done;
        }
        const uint8_t *payload = src + pos + h.header_size;
        switch (h.magic) {
        case MAGIC_RAW:
            memcpy(dst + o, payload, h.n_raw);
            break;
        case MAGIC_LZVN:
            if (decode_lzvn_block(&c, &h, payload, dst, o) != 0) goto done;
            break;
        default:  // v1, v2
            if (!w && !(w = calloc(1, sizeof *w))) {
                fail(&c, "out of memory");
                goto done;
            }
            if (decode_lzfse_block(&c, &h, payload, dst, o, capacity, w) != 0) goto done;
            break;
        }
        o += h.n_raw;
        pos += h.header_size + h.payload_size;
    }
    *written = o;
    result = 0;
done:
    free(w);
    return result;
}
