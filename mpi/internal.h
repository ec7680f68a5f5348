// broadphase_mpi's private layout: the context, its decomposition and its buffers.
#ifndef BP_MPI_INTERNAL_H
#define BP_MPI_INTERNAL_H

#include <stdint.h>

#include "broadphase_mpi.h"

// ---- Decomposition (decomp.c): a binary tree of axis cuts whose leaves are ranks -------------
// Both the balanced default (recursive coordinate bisection) and the caller's grid are stored as
// such a tree, so that locating a point or a box is the same descent either way.

typedef struct bpm_node {
    int32_t axis;
    float cut;          // points with x[axis] < cut go to child[0], the others to child[1]
    int32_t child[2];   // >= 0: a node; < 0: the leaf of rank -child - 1
} bpm_node;

typedef struct bpm_decomp {
    int dim, ranks;
    int32_t root;       // a node, or a leaf code (one rank)
    bpm_node *nodes;    // ranks - 1 nodes
    int32_t used;       // nodes filled while building
    float *lo, *hi;     // ranks x 3: each rank's region, half-open, +-infinity at the outer faces
} bpm_decomp;

static inline int32_t bpm_leaf(int rank) { return -(int32_t)rank - 1; }

/// Cuts the tree from `m` sample points (dim floats each, reordered in place): each split gives
/// the lower half of the ranks the same share of the points, on the widest axis.
void bpm_decomp_rcb(bpm_decomp *d, float *points, size_t m);

/// The caller's grid (broadphase_mpi.h, bp_mpi_set_grid); counts and cuts already checked.
void bpm_decomp_grid(bpm_decomp *d, const int *counts, const float *cuts);

/// The rank whose region holds point p.
int bpm_decomp_locate(const bpm_decomp *d, const float *p);

/// Writes to `out` (room for every rank) each rank whose region the box (min[dim], max[dim])
/// overlaps, and returns how many: a region [lo, hi) is overlapped when max >= lo and min < hi on
/// every axis, so that the lower corner of two boxes' intersection lies in a region both reach.
int bpm_decomp_overlaps(const bpm_decomp *d, const float *min, const float *max, int32_t *out);

// ---- The context -------------------------------------------------------------------------

struct bp_mpi_context {
    bp_mpi_def def;
    MPI_Comm comm;               // the caller's communicator, duplicated
    int rank, ranks, dim;
    MPI_Datatype box_type;       // one ghost record: 2 * dim floats then a uint64 id
    MPI_Datatype pair_type;      // one bp_mpi_pair
    size_t rec_bytes;            // bytes of a ghost record
    bp_context *core;            // pair finding on this rank's region
    bpm_decomp decomp;
    bool have_decomp, user_grid, rebalance;
    uint32_t sample;             // points per rank in the decomposition's sample
    size_t bytes;                // held through the allocator (the core's not included)

    // Buffers, kept between frames and grown by doubling: a warm frame allocates nothing.
    float *lboxes;      size_t lboxes_cap;   // boxes here: kept first, then ghosts (floats)
    uint64_t *lids;     size_t lids_cap;
    uint8_t *linside;   size_t linside_cap;  // 1: a kept box inside this region (no test for its pairs)
    size_t core_n;                           // boxes the core got last frame (stable_count)
    int32_t *lowner;    size_t lowner_cap;   // the rank that passed each ghost (the boxes after the kept ones)
    uint32_t *outgoing; size_t outgoing_cap; // (box index, destination) of each copy to send
    unsigned char *sendbuf; size_t sendbuf_cap;
    unsigned char *recvbuf; size_t recvbuf_cap;
    bp_mpi_pair *fwd;   size_t fwd_cap;      // pairs to forward, in the order found
    int32_t *fwd_dest;  size_t fwd_dest_cap;
    bp_mpi_pair *fwd_send; size_t fwd_send_cap;  // the same, grouped by destination
    bp_mpi_pair *pairs; size_t pairs_cap;    // this rank's pairs (the result)
    float *sample_buf;  size_t sample_cap;   // every rank's sample records
    int32_t *dests;                          // ranks entries: scratch of one box's destinations
    int *scount, *sdispl, *rcount, *rdispl;  // ranks entries each
    int64_t *sinfo, *rinfo;                  // 2 x ranks: (count, status) exchanged before data

    bp_mpi_stats stats;
};

void *bpm_alloc(bp_mpi_context *ctx, size_t bytes);
void bpm_free(bp_mpi_context *ctx, void *p, size_t bytes);
/// Grows *p (of *cap elements of `elem` bytes) to at least `need` elements, doubling, keeping
/// the contents. BP_ERR_NOMEM leaves *p as it was.
bp_status bpm_reserve(bp_mpi_context *ctx, void **p, size_t *cap, size_t need, size_t elem);

/// The frame (frame.c): boxes are n records of 2 * dim floats.
bp_status bpm_find(bp_mpi_context *ctx, const float *boxes, const uint64_t *ids, size_t n, int dim,
                   bp_mpi_pair_fn *fn, void *user, bp_mpi_pairs *out);

#endif
