// SPDX-License-Identifier: GPL-2.0
/*
 * ovhbench: a fixed amount of fork/exec/wait and pipe ping-pong work,
 * timed on CLOCK_MONOTONIC.  Under QEMU -icount shift=S with one vCPU
 * the guest clock advances 2^S ns per instruction and the CPU never idles
 * in this loop, so the elapsed time is the instruction count of the work
 * (kernel and user, interrupts included): the kernel's overhead, stock vs
 * patched, without host noise.
 *
 *   ovhbench [--fork N] [--pipe N] [--runs R]
 *
 * Runs each part R times (default 3) and prints one JSON line:
 *   {"tool":"ovhbench","fork":N,"pipe":N,"runs":R,
 *    "fork_ns":[...],"pipe_ns":[...]}
 * fork: fork(), the child execs this program with --child (which exits at
 * once), the parent waits.  pipe: N one-byte round trips between two
 * processes over two pipes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 20

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "ovhbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static unsigned long long fork_exec(const char *self, long n)
{
	unsigned long long t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execl(self, self, "--child", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "ovhbench: child failed (exec %s)\n", self);
			exit(1);
		}
	}
	return now_ns() - t0;
}

static unsigned long long pipe_pingpong(long n)
{
	int to_child[2], to_parent[2], status;
	unsigned long long t0;
	char c = 0;
	pid_t pid;
	long i;

	if (pipe(to_child) || pipe(to_parent))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (i = 0; i < n; i++) {
			if (read(to_child[0], &c, 1) != 1 ||
			    write(to_parent[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (write(to_child[1], &c, 1) != 1 ||
		    read(to_parent[0], &c, 1) != 1)
			die("pipe round trip");
	}
	t0 = now_ns() - t0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("pipe child");
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	return t0;
}

static long arg_long(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v ? v : "", &end, 10);
	if (!v || errno || *end || x < lo || x > hi) {
		fprintf(stderr, "ovhbench: %s wants a number %ld..%ld\n", opt, lo, hi);
		exit(2);
	}
	return x;
}

static void print_list(const char *key, unsigned long long *v, int n)
{
	int i;

	printf(",\"%s\":[", key);
	for (i = 0; i < n; i++)
		printf("%s%llu", i ? "," : "", v[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	unsigned long long fork_ns[MAX_RUNS], pipe_ns[MAX_RUNS];
	long nfork = 1000, npipe = 10000, runs = 3;
	int i;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fork") && i + 1 < argc)
			nfork = arg_long("--fork", argv[++i], 0, 10000000);
		else if (!strcmp(argv[i], "--pipe") && i + 1 < argc)
			npipe = arg_long("--pipe", argv[++i], 0, 100000000);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = arg_long("--runs", argv[++i], 1, MAX_RUNS);
		else {
			fprintf(stderr, "usage: ovhbench [--fork N] [--pipe N] [--runs R]\n");
			return 2;
		}
	}
	for (i = 0; i < runs; i++) {
		fork_ns[i] = fork_exec("/proc/self/exe", nfork);
		pipe_ns[i] = pipe_pingpong(npipe);
	}
	printf("{\"tool\":\"ovhbench\",\"fork\":%ld,\"pipe\":%ld,\"runs\":%ld",
	       nfork, npipe, runs);
	print_list("fork_ns", fork_ns, runs);
	print_list("pipe_ns", pipe_ns, runs);
	printf("}\n");
	return 0;
}
