// The k-th smallest of n floats (quickselect, median-of-three pivots, in place): the 3D view's
// orbit pivot is the median valid depth, and sorting a whole frame for it took seconds in a debug
// build. Expected O(n); the values are reordered.
#include <stddef.h>
#include "dl_depthkit.h"

static void swap_f(float *a, float *b) { float t = *a; *a = *b; *b = t; }

float dl_select_float(float *v, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo]) swap_f(&v[mid], &v[lo]);
        if (v[hi] < v[lo]) swap_f(&v[hi], &v[lo]);
        if (v[hi] < v[mid]) swap_f(&v[hi], &v[mid]);
        float pivot = v[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                swap_f(&v[i], &v[j]);
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}
