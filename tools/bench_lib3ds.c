/*
 * bench_lib3ds: load throughput of lib3ds 1.3 (Debian lib3ds-dev) on the same files keyscene's
 * `load` benchmark reads, for the side-by-side figures in docs/benchmarks.md. Our own code; it
 * only links the library.
 *
 * Build:  cc -O2 -Wall -o /tmp/bench_lib3ds tools/bench_lib3ds.c -l3ds -lm
 * Usage:  /tmp/bench_lib3ds [-n ROUNDS] [-e] FILE...
 *         -n ROUNDS  how many times the whole file list is loaded (default 200)
 *         -e         after each load also evaluate 10 frames spread over the keyframer range
 *                    (lib3ds_file_eval), as keyscene's `load_and_evaluate_all`
 * Prints one line per file (best round, MB/s) and the total over all files
 * (MB = 10^6 bytes, as divan reports). Files lib3ds cannot load are reported and skipped.
 *
 * Each round loads every file with lib3ds_file_load (read from disk, in the OS cache after the
 * first round) and frees it. Timing uses CLOCK_MONOTONIC.
 */
#include <lib3ds/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void work(const char *path, int eval) {
    Lib3dsFile *f = lib3ds_file_load(path);
    if (!f) return;
    if (eval) {
        for (int i = 0; i < 10; i++) {
            float t = f->segment_from + (f->segment_to - f->segment_from) * i / 9.0f;
            lib3ds_file_eval(f, t);
        }
    }
    lib3ds_file_free(f);
}

int main(int argc, char **argv) {
    int rounds = 200, eval = 0, first = 1;
    while (first < argc && argv[first][0] == '-') {
        if (!strcmp(argv[first], "-n") && first + 1 < argc) {
            rounds = atoi(argv[first + 1]);
            first += 2;
        } else if (!strcmp(argv[first], "-e")) {
            eval = 1;
            first++;
        } else {
            fprintf(stderr, "usage: %s [-n ROUNDS] [-e] FILE...\n", argv[0]);
            return 2;
        }
    }
    int n = argc - first;
    if (n <= 0 || rounds <= 0) {
        fprintf(stderr, "usage: %s [-n ROUNDS] [-e] FILE...\n", argv[0]);
        return 2;
    }
    char **files = argv + first;
    double *size = calloc(n, sizeof *size), *best = calloc(n, sizeof *best);
    int *ok = calloc(n, sizeof *ok);
    double total_bytes = 0;
    int loaded = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        Lib3dsFile *f = lib3ds_file_load(files[i]);
        if (!f || stat(files[i], &st) != 0) {
            fprintf(stderr, "%s: lib3ds cannot load it; skipped\n", files[i]);
            continue;
        }
        lib3ds_file_free(f);
        ok[i] = 1;
        size[i] = (double)st.st_size;
        best[i] = 1e30;
        total_bytes += size[i];
        loaded++;
    }
    double best_total = 1e30;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (int i = 0; i < n; i++) {
            if (!ok[i]) continue;
            double a = now();
            work(files[i], eval);
            double d = now() - a;
            if (d < best[i]) best[i] = d;
        }
        double d = now() - t0;
        if (d < best_total) best_total = d;
    }
    for (int i = 0; i < n; i++)
        if (ok[i])
            printf("%-60s %9.0f bytes %10.1f us %9.1f MB/s\n", files[i], size[i], best[i] * 1e6,
                   size[i] / best[i] / 1e6);
    printf("total: %d files, %.0f bytes, best round %.3f ms, %.1f MB/s%s\n", loaded, total_bytes,
           best_total * 1e3, total_bytes / best_total / 1e6, eval ? " (load + 10 evals)" : "");
    free(size);
    free(best);
    free(ok);
    return 0;
}
