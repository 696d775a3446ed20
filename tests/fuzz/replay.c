/* SPDX-License-Identifier: GPL-2.0-or-later */
/* replay.c - a fuzz target's inputs in make check, without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Linked with one target (tests/fuzz/fuzz_*.c), built by any compiler:
 * runs every file of tests/fuzz/corpus/NAME (the seeds) and
 * tests/fuzz/regressions/NAME (every input a fuzzer ever failed on, and
 * inputs for edges fixed by hand) through LLVMFuzzerTestOneInput(). A
 * target fails by aborting (or a sanitizer report in a sanitizer build);
 * a directory missing or without inputs fails too: it would prove
 * nothing. Arguments, if any, are files to run instead.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	/* An exact-size copy: ASan sees a read past the input's end. */
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

/* Run every regular file of DIR/NAME; the number run, or -1. */
static int run_dir(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	char *path;
	int n = 0, rc;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
			closedir(d);
			return -1;
		}
		rc = run_file(path);
		free(path);
		if (rc < 0) {
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "corpus", "regressions" };
	char *dir;
	int n;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (run_file(argv[i]) < 0)
				return 1;
		return 0;
	}
	for (unsigned i = 0; i < 2; i++) {
		if (asprintf(&dir, "%s/%s/%s", FUZZ_DIR, kinds[i],
			     FUZZ_NAME) < 0)
			return 99;
		n = run_dir(dir);
		if (n <= 0) {
			fprintf(stderr, "FAIL: %s: %s\n", dir,
				n ? "unreadable" : "no inputs");
			free(dir);
			return 1;
		}
		printf("# %s: %d inputs\n", dir, n);
		free(dir);
	}
	return 0;
}
