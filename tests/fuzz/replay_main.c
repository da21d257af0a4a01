// SPDX-License-Identifier: MIT
/*
 * Runs a harness on every file given, and on every file in every directory given,
 * without libFuzzer: what `make test` replays the seed corpora with, under gcc and
 * its sanitizers too.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *data;
	size_t size;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	size = (size_t)st.st_size;
	/* exactly its size, so that ASan catches a read past the input */
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	replayed++;
	free(data);
	return 0;
}

static int replay_dir(const char *path)
{
	struct dirent **names;
	char file[4096];
	int n, rc = 0;

	/* sorted, so that a replay runs in the same order everywhere */
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
			rc |= replay_file(file);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	struct stat st;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		rc |= !stat(argv[i], &st) && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
								 : replay_file(argv[i]);
	printf("%s: replayed %u inputs\n", argv[0], replayed);
	return rc || fuzz_replay_done() ? 1 : 0;
}
